// A resumed run's graph settings: graph flags given with --resume replace the stored ones
// (src/cli/shared.ts storedConfig), and nothing else about the stored config changes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storedConfig } from '../src/cli/shared.js';
import { loadPreset, RunStore } from '../src/run/index.js';

const runsDir = mkdtempSync(join(tmpdir(), 'cogen-resume-graph-'));
afterAll(() => rmSync(runsDir, { recursive: true, force: true }));

function storedRun(id: string, graph: Record<string, unknown>): void {
  const config = loadPreset('smoke', { graph });
  const store = RunStore.open(join(runsDir, id), { create: true });
  store.setMeta({ config: JSON.stringify(config), preset: 'smoke', kind: 'served' });
  store.close();
}

describe('storedConfig with graph flags', () => {
  it('keeps the stored graph settings when no flag is given', () => {
    storedRun('kept', { kind: 'neo4j', uri: 'bolt://127.0.0.1:1', user: 'u' });
    const { config } = storedConfig(runsDir, 'kept', 'served');
    expect(config.graph).toMatchObject({ kind: 'neo4j', uri: 'bolt://127.0.0.1:1', user: 'u' });
  });
  it('replaces the graph settings given, and nothing else', () => {
    storedRun('moved', {});
    const before = storedConfig(runsDir, 'moved', 'served').config;
    const flags = { graph: 'neo4j' as const, neo4jUri: 'bolt://127.0.0.1:2', neo4jDatabase: 'skills' };
    const { config } = storedConfig(runsDir, 'moved', 'served', flags);
    expect(config.graph).toEqual({ ...before.graph, kind: 'neo4j', uri: 'bolt://127.0.0.1:2', database: 'skills' });
    expect({ ...config, graph: null }).toEqual({ ...before, graph: null });
  });
});
