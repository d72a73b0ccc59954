#!/usr/bin/env node
// The CLI entry: registers tsx so the TypeScript sources run as they are (no build step), then
// hands over to src/cli.ts. Exits explicitly: a failed setup must not leave the process waiting on
// worker threads (stdout and stderr are synchronous for files and pipes on Linux, so nothing is lost).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exit(await main(process.argv));
