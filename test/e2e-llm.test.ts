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
      [
        'run',
        '--preset',
        'smoke',
        '--steps',
        '3',
        '--proposer',
        'llm',
        '--share',
        '1',
        '--provider',
        'scripted',
        '--model',
        'fake',
        '--script',
        SCRIPT,
        '--runs-dir',
        runsDir,
        '--run-id',
        'p',
        '--json',
      ],
      { env },
    );
    expect(res.code, res.stderr).toBe(0);
    const db = new Database(join(runsDir, 'p', 'run.db'), { readonly: true });
    const outcomes = db.prepare('SELECT outcome, COUNT(*) n FROM proposals GROUP BY outcome').all() as {
      outcome: string;
      n: number;
    }[];
    const by = Object.fromEntries(outcomes.map((o) => [o.outcome, o.n]));
    expect(by.accepted).toBeGreaterThan(0);
    // The fixture's malformed JSON, schema violation, looping program and duplicate are all rejected, by reason.
    expect(Object.keys(by).filter((k) => k !== 'accepted').length).toBeGreaterThanOrEqual(3);
    const llmTasks = db.prepare("SELECT COUNT(*) n FROM tasks WHERE proposer = 'llm:fake'").get() as { n: number };
    expect(llmTasks.n).toBe(by.accepted);
    // Each accepted proposal is linked to its task and carries its learnability reward and prompt.
    const accepted = db
      .prepare("SELECT task_id, learnability, prompt FROM proposals WHERE outcome = 'accepted'")
      .all() as { task_id: string; learnability: number | null; prompt: string }[];
    const llmTask = db.prepare("SELECT COUNT(*) n FROM tasks WHERE id = ? AND proposer = 'llm:fake'");
    for (const p of accepted) {
      expect((llmTask.get(p.task_id) as { n: number }).n, p.task_id).toBe(1);
      // 1 − p for a solve rate 0 < p < 1, else 0 (never null once the task was tried).
      expect(p.learnability).toBeGreaterThanOrEqual(0);
      expect(p.learnability).toBeLessThan(1);
      expect(p.prompt.length).toBeGreaterThan(50);
    }
    const metrics = (db.prepare('SELECT data FROM metrics').all() as { data: string }[]).map((r) => JSON.parse(r.data));
    expect(metrics.every((m) => typeof m.proposals === 'number')).toBe(true);
    // The graph knows the LLM-written tasks too.
    expect(
      (
        db
          .prepare("SELECT COUNT(*) n FROM graph_tasks WHERE id IN (SELECT id FROM tasks WHERE proposer = 'llm:fake')")
          .get() as { n: number }
      ).n,
    ).toBe(by.accepted);
    db.close();

    const out = join(runsDir, 'p-tasks.jsonl');
    expect(cogen(['export', '--run', 'p', '--runs-dir', runsDir, '--out', out], { env }).code).toBe(0);
    for (const file of allFiles(runsDir)) expect(readFileSync(file).includes(SECRET), file).toBe(false);
    expect(res.stdout + res.stderr).not.toContain(SECRET);
  });

  it('--solver llm: pass@k metrics from the scripted model, nothing trained', () => {
    const runsDir = tempDir('cogen-llm-');
    const res = cogen(
      [
        'run',
        '--preset',
        'smoke',
        '--steps',
        '2',
        '--solver',
        'llm',
        '--provider',
        'scripted',
        '--model',
        'fake',
        '--script',
        SCRIPT,
        '--runs-dir',
        runsDir,
        '--run-id',
        's',
        '--json',
      ],
      { env },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).backend).toBe('llm:fake');
    const db = new Database(join(runsDir, 's', 'run.db'), { readonly: true });
    const metrics = (db.prepare('SELECT data FROM metrics ORDER BY step').all() as { data: string }[]).map((r) =>
      JSON.parse(r.data),
    );
    // pass@1 of a group is its solved fraction; the metric is the mean over the step's tasks.
    const scores = db.prepare(
      'SELECT AVG(CAST(solved AS REAL) / attempts) p, SUM(attempts) answers FROM task_scores WHERE step = ?',
    );
    const perStep = metrics.map((m) => scores.get(m.step) as { p: number; answers: number });
    const passAt1 = perStep.map((s) => s.p);
    db.close();
    expect(metrics).toHaveLength(2);
    metrics.forEach((m, i) => {
      expect(m.passAt1).toBeCloseTo(passAt1[i]!, 12);
      expect(m.passAt8).toBeGreaterThanOrEqual(m.passAt1);
      expect(m.passAt8).toBeLessThanOrEqual(1);
      // One model call per scored answer, and none failed.
      expect(m['solver.calls']).toBe(perStep[i]!.answers);
      expect(m['solver.failedCalls']).toBe(0);
      // Nothing trained: no group reaches an update and no policy token is counted.
      expect(m).toMatchObject({ groups: 0, tokens: 0, loss: 0 });
    });
    // The scripted answers solve some tasks and miss others: the metric is neither stuck at 0 nor at 1.
    expect(Math.max(...passAt1)).toBeGreaterThan(0);
    expect(Math.min(...passAt1)).toBeLessThan(1);
    for (const file of allFiles(runsDir)) expect(readFileSync(file).includes(SECRET), file).toBe(false);
  });
});
