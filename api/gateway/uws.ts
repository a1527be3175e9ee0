/**
 * uWebSockets.js is a CommonJS native addon; load it through require so both tsx (dev/test) and the
 * compiled build resolve the same binary, and keep its types from index.d.ts.
 */
import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

export const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof UWS;
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, us_socket_context_t, WebSocket } from 'uWebSockets.js';
