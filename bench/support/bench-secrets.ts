/**
 * Explicit secrets for a bench runtime: a bench never relies on built-in defaults (there are none),
 * and never writes generated secrets into the operator's FLOW_DATA_DIR.
 */
import { randomBytes } from 'node:crypto';

export function benchSecrets(): Record<string, string> {
  return {
    FLOW_JWT_SECRET: randomBytes(32).toString('hex'),
    FLOW_ADMIN_TOKEN: randomBytes(24).toString('hex'),
    FLOW_CURSOR_SECRET: randomBytes(32).toString('hex'),
  };
}
