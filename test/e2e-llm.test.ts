// `cogen run --proposer llm` and `--solver llm` end to end with LangChain's scripted chat model, and
// the secret check: an API key in the environment never reaches the run store, the logs or exports.
import Database from 'better-sqlite3';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cogen, ROOT, tempDir } from './helpers.js';

const SCRIPT = join(ROOT, 'test', 'fixtures', 'llm-proposals.json');
const SECRET = 'sk-cogen-test-SECRET-4f9a1c';
const env = { OPENAI_API_KEY: SECRET, COGEN_LLM_API_KEY: SECRET };

function allFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe('LLM agents through the CLI', () => {
  it('--proposer llm: accepted proposals land in the archive, rejections are counted, no secret leaks', () => {
    const runsDir = tempDir('cogen-llm-');
    const res = cogen(
      ['run', '--preset', 'smoke', '--steps', '3', '--proposer', 'llm', '--share', '1', '--provider', 'scripted', '--model', 'fake', '--script', SCRIPT, '--runs-dir', runsDir, '--run-id', 'p', '--json'],
      { env },
    );
    expect(res.code, res.stderr).toBe(0);
    const db = new Database(join(runsDir, 'p', 'run.db'), { readonly: true });
    const outcomes = db.prepare('SELECT outcome, COUNT(*) n FROM proposals GROUP BY outcome').all() as { outcome: string; n: number }[];
    const by = Object.fromEntries(outcomes.map((o) => [o.outcome, o.n]));
    expect(by.accepted).toBeGreaterThan(0);
    // The fixture's malformed JSON, schema violation, looping program and duplicate are all rejected, by reason.
    expect(Object.keys(by).filter((k) => k !== 'accepted').length).toBeGreaterThanOrEqual(3);
    const llmTasks = db.prepare("SELECT COUNT(*) n FROM tasks WHERE proposer = 'llm:fake'").get() as { n: number };
    expect(llmTasks.n).toBe(by.accepted);
    // Each accepted proposal is linked to its task and carries its learnability reward and prompt.
    const accepted = db.prepare("SELECT task_id, learnability, prompt FROM proposals WHERE outcome = 'accepted'").all() as { task_id: string; learnability: number | null; prompt: string }[];
    for (const p of accepted) {
      expect(p.task_id).toBeTruthy();
      expect(p.learnability).not.toBeNull();
      expect(p.prompt.length).toBeGreaterThan(50);
    }
    const metrics = (db.prepare('SELECT data FROM metrics').all() as { data: string }[]).map((r) => JSON.parse(r.data));
    expect(metrics.every((m) => typeof m.proposals === 'number')).toBe(true);
    // The graph knows the LLM-written tasks too.
    expect((db.prepare("SELECT COUNT(*) n FROM graph_tasks WHERE id IN (SELECT id FROM tasks WHERE proposer = 'llm:fake')").get() as { n: number }).n).toBe(by.accepted);
    db.close();

    const out = join(runsDir, 'p-tasks.jsonl');
    expect(cogen(['export', '--run', 'p', '--runs-dir', runsDir, '--out', out], { env }).code).toBe(0);
    for (const file of allFiles(runsDir)) expect(readFileSync(file).includes(SECRET), file).toBe(false);
    expect(res.stdout + res.stderr).not.toContain(SECRET);
  });

  it('--solver llm: pass@k metrics from the scripted model, nothing trained', () => {
    const runsDir = tempDir('cogen-llm-');
    const res = cogen(['run', '--preset', 'smoke', '--steps', '2', '--solver', 'llm', '--provider', 'scripted', '--model', 'fake', '--script', SCRIPT, '--runs-dir', runsDir, '--run-id', 's', '--json'], { env });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).backend).toBe('llm:fake');
    const db = new Database(join(runsDir, 's', 'run.db'), { readonly: true });
    const metrics = (db.prepare('SELECT data FROM metrics').all() as { data: string }[]).map((r) => JSON.parse(r.data));
    db.close();
    expect(metrics).toHaveLength(2);
    for (const m of metrics) {
      expect(m.passAt1).toBeGreaterThanOrEqual(0);
      expect(m.passAt8).toBeGreaterThanOrEqual(m.passAt1);
      expect(m['solver.calls']).toBeGreaterThan(0);
    }
    for (const file of allFiles(runsDir)) expect(readFileSync(file).includes(SECRET), file).toBe(false);
  });
});
