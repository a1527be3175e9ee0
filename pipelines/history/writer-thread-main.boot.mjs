// Running from source (tests, `npm run flow`): a worker thread cannot load .ts, so register tsx in
// it first. From the build, writer-thread.ts starts dist/pipelines/history/writer-thread-main.js.
import { register } from 'tsx/esm/api';

register();
await import('./writer-thread-main.ts');
