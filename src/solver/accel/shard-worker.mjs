// Entry of a shard worker (parallel.ts): a worker thread starts without the parent's TypeScript
// loader, so it registers tsx before loading the TypeScript worker loop.
import { register } from 'tsx/esm/api';

register();
await import('./shard-worker.ts');
