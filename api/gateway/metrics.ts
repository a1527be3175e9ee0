/** Prometheus metrics of the stream gateway. Several gateways in one process share one set. */
import { Counter, Gauge, type Registry } from 'prom-client';
import { singleMetric as once } from '../../src/metrics.js';

export interface GatewayMetrics {
  connections: Gauge;
  upgrades: Counter<'result'>;
  busMessages: Counter<'channel'>;
  dropped: Counter<'channel'>;
  closed: Counter<'reason'>;
  resumes: Counter<'result'>;
  replayed: Counter<'channel'>;
  feedGaps: Counter<string>;
}

export function gatewayMetrics(registry: Registry): GatewayMetrics {
  const registers = [registry];
  return {
    connections: once(registry, 'flow_stream_connections', () => new Gauge({ name: 'flow_stream_connections', help: 'Open stream connections in this process', registers })),
    upgrades: once(
      registry,
      'flow_stream_upgrades_total',
      () => new Counter({ name: 'flow_stream_upgrades_total', help: 'Stream upgrade attempts by result (accepted, unauthorized, limit, error)', labelNames: ['result'] as const, registers }),
    ),
    busMessages: once(
      registry,
      'flow_stream_bus_messages_total',
      () =>
        new Counter({
          name: 'flow_stream_bus_messages_total',
          help: 'Events received by the gateway from the event log, by channel',
          labelNames: ['channel'] as const,
          registers,
        }),
    ),
    dropped: once(
      registry,
      'flow_stream_dropped_messages_total',
      () =>
        new Counter({
          name: 'flow_stream_dropped_messages_total',
          help: 'Messages not sent to a connection because its send buffer was full (backpressure), by channel',
          labelNames: ['channel'] as const,
          registers,
        }),
    ),
    closed: once(
      registry,
      'flow_stream_server_closes_total',
      () => new Counter({ name: 'flow_stream_server_closes_total', help: 'Connections closed by the server, by reason', labelNames: ['reason'] as const, registers }),
    ),
    resumes: once(
      registry,
      'flow_stream_resumes_total',
      () => new Counter({ name: 'flow_stream_resumes_total', help: 'Per-contest resumes (subscribe with resume_from) by result (replayed, unavailable)', labelNames: ['result'] as const, registers }),
    ),
    replayed: once(
      registry,
      'flow_stream_replayed_events_total',
      () => new Counter({ name: 'flow_stream_replayed_events_total', help: 'Events sent by resume replays rather than live delivery, by channel', labelNames: ['channel'] as const, registers }),
    ),
    feedGaps: once(
      registry,
      'flow_stream_feed_gaps_total',
      () => new Counter({ name: 'flow_stream_feed_gaps_total', help: 'Times this gateway found the feed trimmed past its position (once per contest affected, once for the private channels); subscribers were told events_missed', registers }),
    ),
  };
}
