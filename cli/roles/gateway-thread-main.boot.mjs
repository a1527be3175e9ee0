// Running from source (tests, `npm run flow`): a worker thread cannot load .ts, so register tsx in
// it first. From the build, gateway-thread.ts starts dist/cli/roles/gateway-thread-main.js.
import { register } from 'tsx/esm/api';

register();
await import('./gateway-thread-main.ts');
