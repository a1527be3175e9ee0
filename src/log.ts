/** Structured logs (pino). One root logger; modules take children with a `component` field. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level = process.env.LOG_LEVEL || 'info'): Logger {
  return pino({ level, base: { service: 'flow' }, timestamp: pino.stdTimeFunctions.isoTime });
}
