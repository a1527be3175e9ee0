/** The uWebSockets.js stream gateway (the `gateway` role). See docs/stream.md. */
export { startGateway, DEFAULT_TUNING, STREAM_PATH, CLOSE_KEY_INVALID, type Gateway, type GatewayDeps, type GatewayTuning } from './gateway.js';
export { CHANNEL_RULES, MAX_CONTESTS_PER_CHANNEL, type Subscription } from './channels.js';
export { BusEvent, DEFAULT_FILTERS, PASS_THROUGH, type ChannelFilter } from './filters.js';
