#!/usr/bin/env node
// The CLI entry: registers tsx so the TypeScript sources run as they are (no build step), then
// hands over to src/cli.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv);
