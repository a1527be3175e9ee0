// Running from source (tests, `npm run flow`): piscina cannot load .ts, so register tsx in the
// worker thread and re-export the task. From the build, the pool loads dist/workers/trade-signals.js.
import { register } from 'tsx/esm/api';

register();
const mod = await import('./trade-signals.ts');
export default mod.default;
