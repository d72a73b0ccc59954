// `cogen envs` end to end, as a user runs it: episodes played with the reference policy, a random
// policy and a scripted chat model, recorded in a run, listed by `cogen runs`, exported as
// trajectories; bad input is one line.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cogen, tempDir } from './helpers.js';

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);

describe('cogen envs', () => {
  const runsDir = tempDir('cogen-envs-cli-');

  it('the reference policy solves every episode; the run lists and exports as trajectories', () => {
    const r = cogen([
      'envs',
      '--kind',
      'probe,repair,search',
      '--episodes',
      '2',
      '--families',
      'arith,array',
      '--run-id',
      'ref',
      '--runs-dir',
      runsDir,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.rows.map((x: any) => [x.kind, x.solved, x.episodes])).toEqual([
      ['probe', 2, 2],
      ['repair', 2, 2],
      ['search', 2, 2],
    ]);
    expect(cogen(['runs', '--runs-dir', runsDir]).stdout).toMatch(/^ref {2}envs {2}envs:reference {2}finished/m);
    const out = join(runsDir, 'ref.jsonl');
    expect(cogen(['export', '--run', 'ref', '--what', 'trajectories', '--out', out, '--runs-dir', runsDir]).code).toBe(
      0,
    );
    const rows = lines(out);
    expect(rows).toHaveLength(6);
    expect(rows.every((x) => x.reward === 1 && x.messages.at(-2).tool_calls[0].function.name === 'submit')).toBe(true);
  });

  it('the same seed makes the same environments; the random policy is recorded with its rewards', () => {
    const a = JSON.parse(
      cogen([
        'envs',
        '--kind',
        'search',
        '--episodes',
        '3',
        '--policy',
        'random',
        '--seed',
        '5',
        '--run-id',
        'r1',
        '--runs-dir',
        runsDir,
        '--json',
      ]).stdout,
    );
    const b = JSON.parse(
      cogen([
        'envs',
        '--kind',
        'search',
        '--episodes',
        '3',
        '--policy',
        'random',
        '--seed',
        '5',
        '--run-id',
        'r2',
        '--runs-dir',
        runsDir,
        '--json',
      ]).stdout,
    );
    expect(b.rows).toEqual(a.rows);
    cogen([
      'export',
      '--run',
      'r1',
      '--what',
      'trajectories',
      '--out',
      join(runsDir, 'r1.jsonl'),
      '--runs-dir',
      runsDir,
    ]);
    cogen([
      'export',
      '--run',
      'r2',
      '--what',
      'trajectories',
      '--out',
      join(runsDir, 'r2.jsonl'),
      '--runs-dir',
      runsDir,
    ]);
    expect(lines(join(runsDir, 'r2.jsonl')).map((x) => x.messages)).toEqual(
      lines(join(runsDir, 'r1.jsonl')).map((x) => x.messages),
    );
  });

  it('a chat model that answers in text, not tool calls, is recorded with reward 0 and the reason', () => {
    const script = join(runsDir, 'script.json');
    writeFileSync(script, JSON.stringify(['The answer is [3].']));
    const r = cogen([
      'envs',
      '--kind',
      'search',
      '--episodes',
      '2',
      '--policy',
      'llm',
      '--provider',
      'scripted',
      '--script',
      script,
      '--run-id',
      'llm',
      '--runs-dir',
      runsDir,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).rows[0]).toMatchObject({ solved: 0, endings: { malformed: 2 } });
  });

  it('bad input is one clear line, and no run is left behind', () => {
    const bad = cogen(['envs', '--kind', 'dance', '--run-id', 'bad', '--runs-dir', runsDir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe('cogen: unknown environment kind "dance"; kinds: probe, repair, search');
    const noKey = cogen(
      ['envs', '--policy', 'llm', '--provider', 'openai', '--run-id', 'nokey', '--runs-dir', runsDir],
      { env: { OPENAI_API_KEY: '', COGEN_LLM_API_KEY: '' } },
    );
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/^cogen: --policy llm: provider 'openai' needs an API key/);
    expect(existsSync(join(runsDir, 'nokey'))).toBe(false);
    expect(cogen(['envs', '--kind', 'probe', '--run-id', 'ref', '--runs-dir', runsDir]).stderr).toMatch(
      /already exists/,
    );
  });
});
