// `cogen dashboard` in a real headless Chromium (Debian's `chromium`, driven by playwright-core; no
// browser is downloaded). Two real runs: a short smoke run of the built-in solver, started with the
// CLI in another process while the page is already open (the page follows it live), and a run whose
// solver is a chat model that answers right (so skills are learned and the step slider has something
// to replay), with scripted LLM proposals. The page's curves are read back and compared with the run
// store, the slider is moved and the skills' colours are checked against the timeline, a task is
// opened, and screenshots are saved to test-artifacts/ (with COGEN_UPDATE_SCREENSHOTS=1 also to docs/,
// the pictures of docs/dashboard.md and the README). Under CI=true a missing /usr/bin/chromium fails the test; locally it skips.
import { FakeChatModel } from '@langchain/core/utils/testing';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPreset, startRun } from '../src/index.js';
import { startDashboard, type RunningDashboard } from '../src/dashboard/server.js';
import { RunStore } from '../src/run/testing.js';
import { CLI, ROOT, skillEventsOf, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const CI = process.env.CI === 'true' || process.env.CI === '1';
const ARTIFACTS = join(ROOT, 'test-artifacts');
const UPDATE_DOCS = process.env.COGEN_UPDATE_SCREENSHOTS === '1';
// The smoke run's length: short in the suite; longer when the screenshots of docs/dashboard.md are remade.
const STEPS = Number(process.env.COGEN_DASHBOARD_STEPS ?? (UPDATE_DOCS ? 30 : 6));
const SKIP_REASON = `no ${CHROMIUM} (Debian's chromium package: apt-get install -y chromium); the dashboard's browser test is skipped`;
const STATE_COLOR = { mastered: '#7fc97f', forgotten: '#fdc086', never: '#e0e0e0' } as const;

/** Answers a deduction prompt with the program's true output. */
class OracleChatModel extends FakeChatModel {
  override async _generate(messages: BaseMessage[]) {
    const text = messages.map((m) => String(m.content)).join('\n');
    const program = /```js\n([\s\S]*?)\n```/.exec(text)?.[1];
    const call = /What does (f\(.*\)) return\?/.exec(text)?.[1];
    let answer = 'ANSWER: null';
    try {
      if (program && call)
        answer = `ANSWER: ${JSON.stringify(runInNewContext(`${program}; ${call}`, {}, { timeout: 100 }))}`;
    } catch {
      /* a program that throws gets a wrong answer */
    }
    return { generations: [{ message: new AIMessage(answer), text: answer }], llmOutput: {} };
  }
}

const hex = (rgb: string) => {
  const m = /rgb\((\d+),\s*(\d+),\s*(\d+)\)/.exec(rgb);
  return m
    ? `#${m
        .slice(1, 4)
        .map((x) => Number(x).toString(16).padStart(2, '0'))
        .join('')}`
    : rgb.toLowerCase();
};

if (!HAVE_CHROMIUM && !CI) console.warn(SKIP_REASON);

describe.skipIf(!HAVE_CHROMIUM && !CI)('cogen dashboard in headless Chromium', () => {
  let runsDir = '';
  let dash: RunningDashboard;
  let browser: Browser;
  let child: ChildProcess | undefined;
  let childDone: Promise<number | null>;
  let livePage: Page;
  let liveSeen: string[] = [];

  beforeAll(async () => {
    if (!HAVE_CHROMIUM)
      throw new Error(`CI=true and ${CHROMIUM} is missing: .ci/run installs Debian's chromium with apt-get`);
    mkdirSync(ARTIFACTS, { recursive: true });
    runsDir = tempDir('cogen-dash-');
    // An empty run (it finished with no step) and one still starting (no step yet, status running).
    const empty = RunStore.open(join(runsDir, 'empty'), { create: true });
    empty.setMeta({ runId: 'empty', preset: 'smoke', status: 'finished', startedAt: new Date().toISOString() });
    empty.close();
    const starting = RunStore.open(join(runsDir, 'starting'), { create: true });
    starting.setMeta({ runId: 'starting', preset: 'smoke', status: 'running', startedAt: new Date().toISOString() });
    starting.close();

    dash = await startDashboard({ runsDir, port: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
      ],
    });

    // The smoke run, in another process; the page opens as soon as its directory exists and follows it.
    child = spawn(
      process.execPath,
      [
        CLI,
        'run',
        '--preset',
        'smoke',
        '--steps',
        String(STEPS),
        '--runs-dir',
        runsDir,
        '--run-id',
        'smoke',
        '--no-progress',
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += String(d)));
    childDone = new Promise((resolve) => child!.on('exit', (code) => resolve(code)));
    const t0 = Date.now();
    while (!existsSync(join(runsDir, 'smoke', 'run.db'))) {
      if (Date.now() - t0 > 60_000) throw new Error(`the smoke run did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    livePage = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    await livePage.goto(`${dash.url}/run/smoke`);
    // What the page showed while the run went: the phases and step counts it went through.
    liveSeen = [];
    const watch = setInterval(() => {
      livePage
        .evaluate(() => {
          const s = (globalThis as any).cogenDashboard?.summary;
          return s ? `${s.phase}:${s.steps}` : 'none';
        })
        .then((v) => liveSeen.at(-1) !== v && liveSeen.push(v))
        .catch(() => {});
    }, 200);

    // Meanwhile, in this process: a run whose solver answers right (skills get learned), with scripted LLM proposals.
    const config = loadPreset('smoke', {
      steps: 4,
      families: ['arith', 'logic'],
      probes: { every: 1, perArm: 4 },
      agents: {
        solver: { enabled: true, provider: 'scripted', model: 'oracle', scriptPath: '/dev/null' },
        proposer: {
          provider: 'scripted',
          model: 'fake',
          scriptPath: join(ROOT, 'test', 'fixtures', 'llm-proposals.json'),
          share: 0.5,
        },
      },
    });
    await startRun(config, {
      runsDir,
      preset: 'smoke',
      runId: 'oracle',
      chatModels: { solver: new OracleChatModel({}) },
    });

    const code = await childDone;
    clearInterval(watch);
    if (code !== 0) throw new Error(`the smoke run failed (exit ${code}): ${stderr}`);
  }, 600_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await browser?.close();
    await dash?.close();
  });

  const storeMetrics = (run: string) => {
    const db = new Database(join(runsDir, run, 'run.db'), { readonly: true });
    try {
      return (db.prepare('SELECT data FROM metrics ORDER BY step').all() as { data: string }[]).map(
        (r) => JSON.parse(r.data) as Record<string, unknown>,
      );
    } finally {
      db.close();
    }
  };

  it('an unknown run, an empty run and a run still starting each get a clear page', async () => {
    const page = await browser.newPage();
    const res = await page.goto(`${dash.url}/run/no-such-run`);
    expect(res?.status()).toBe(404);
    await expect.poll(() => page.locator('#message h1').textContent()).toBe('No run "no-such-run"');
    expect(await page.locator('#message').textContent()).toContain('Runs here:');

    await page.goto(`${dash.url}/run/empty`);
    await page.waitForSelector('#banner[data-phase="empty"]');
    expect(await page.locator('#banner h2').textContent()).toBe('Run empty has no steps');
    expect(await page.locator('#curves').isHidden()).toBe(true);

    await page.goto(`${dash.url}/run/starting`);
    await page.waitForSelector('#banner[data-phase="starting"]');
    expect(await page.locator('#banner h2').textContent()).toBe('Run starting is starting');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-starting.png') });
    await page.close();
  });

  it("follows the live run and its curves hold the run store's points", async () => {
    const page = livePage;
    await page.waitForFunction(
      (n) =>
        (globalThis as any).cogenDashboard?.summary?.steps === n && (globalThis as any).cogenDashboard.charts.reward,
      STEPS,
      { timeout: 30_000 },
    );
    // The page was opened before the run had finished: it filled in without a reload.
    expect(liveSeen.length).toBeGreaterThan(1);
    expect(liveSeen[0]).not.toBe(`ready:${STEPS}`);
    await page.waitForFunction((n) => (globalThis as any).cogenDashboard.charts.reward.data[0].length === n, STEPS);
    const charts = await page.evaluate(() =>
      Object.fromEntries(
        Object.entries(
          (globalThis as any).cogenDashboard.charts as Record<
            string,
            { data: (number | null)[][]; series: { label: string }[] }
          >,
        ).map(([id, u]) => [
          id,
          { labels: u.series.slice(1).map((s) => s.label), data: u.data.map((a) => Array.from(a)) },
        ]),
      ),
    );
    const metrics = storeMetrics('smoke');
    const db = new Database(join(runsDir, 'smoke', 'run.db'), { readonly: true });
    const perStep = db.prepare('SELECT step, COUNT(*) n FROM task_scores GROUP BY step ORDER BY step').all() as {
      step: number;
      n: number;
    }[];
    const perArm = db
      .prepare(
        `SELECT s.step step, t.family || '/' || t.level || '/' || t.type arm, COUNT(*) n,
           SUM(s.solved) solved, SUM(s.attempts) attempts
         FROM task_scores s JOIN tasks t ON t.id = s.task_id GROUP BY s.step, arm`,
      )
      .all() as { step: number; arm: string; n: number; solved: number; attempts: number }[];
    db.close();
    // Derived: over the tasks scored in the 50 steps up to a step, an arm's share, and its answers' solve rate.
    const armCurve = (key: string, step: number) => {
      const window = perArm.filter((r) => r.step <= step && r.step > step - 50);
      const sum = (rs: typeof perArm, k: 'n' | 'solved' | 'attempts') => rs.reduce((a, r) => a + r[k], 0);
      const [kind, arm] = [key.slice(0, key.indexOf('.')), key.slice(key.indexOf('.') + 1)];
      const mine = window.filter((r) => r.arm === arm);
      if (kind === 'share') return sum(mine, 'n') / sum(window, 'n');
      return sum(mine, 'attempts') > 0 ? sum(mine, 'solved') / sum(mine, 'attempts') : null;
    };
    expect(metrics).toHaveLength(STEPS);
    for (const id of ['reward', 'probe', 'entropy', 'kl', 'lr', 'throughput'])
      expect(Object.keys(charts)).toContain(id);
    let compared = 0;
    for (const [id, c] of Object.entries(charts)) {
      expect(c.data[0]).toEqual(metrics.map((m) => m.step));
      c.labels.forEach((key, i) => {
        if (key === 'tasksPerSec') {
          // Derived: tasks scored at the step over the step's time.
          metrics.forEach((m, j) =>
            expect(c.data[i + 1]![j]).toBeCloseTo(perStep[j]!.n / ((m.ms as number) / 1000), 6),
          );
          return;
        }
        if (key.startsWith('share.') || key.startsWith('solve.')) {
          metrics.forEach((m, j) => {
            const want = armCurve(key, m.step as number);
            if (want === null) expect(c.data[i + 1]![j]).toBeNull();
            else expect(c.data[i + 1]![j]).toBeCloseTo(want, 12);
          });
          compared++;
          return;
        }
        expect(c.data[i + 1], `${id}: ${key}`).toEqual(
          metrics.map((m) => (typeof m[key] === 'number' ? m[key] : null)),
        );
        compared++;
      });
    }
    expect(compared).toBeGreaterThanOrEqual(8);
    expect(charts.reward!.labels).toContain('solveRate');
    expect(charts.probe!.labels.some((l) => l.startsWith('probe.'))).toBe(true);

    // The heat map: one cell per arm and step, holding the tasks scored there.
    const cells = await page.$$eval('#heat rect[data-arm]', (rs) =>
      rs.map((r) => ({ step: Number(r.getAttribute('data-step')), n: Number(r.getAttribute('data-n')) })),
    );
    for (const { step, n } of perStep)
      expect(cells.filter((c) => c.step === step).reduce((a, c) => a + c.n, 0)).toBe(n);

    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-overview.png') });
    if (UPDATE_DOCS) {
      await page.screenshot({
        path: join(ARTIFACTS, 'dashboard-overview-docs.png'),
        clip: { x: 0, y: 0, width: 1360, height: 900 },
      });
      copyFileSync(join(ARTIFACTS, 'dashboard-overview-docs.png'), join(ROOT, 'docs', 'dashboard-overview.png'));
    }
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-full.png'), fullPage: true });
  });

  it('the step slider replays mastery as the timeline says', async () => {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    await page.goto(`${dash.url}/run/oracle`);
    await page.waitForFunction(
      () => (globalThis as any).cogenDashboard?.cy && (globalThis as any).cogenDashboard.skillsAt !== null,
    );
    const db = new Database(join(runsDir, 'oracle', 'run.db'), { readonly: true });
    const events = skillEventsOf(join(runsDir, 'oracle'));
    const lastStep = Number(
      (db.prepare("SELECT value FROM meta WHERE key = 'lastStep'").get() as { value: string }).value,
    );
    db.close();
    const learned = events.filter((e) => e.event === 'learned');
    expect(learned.length).toBeGreaterThan(0);
    const first = learned[0]!;
    // The timeline, independently of the page: a skill's state at step s is its last event at or before s.
    const stateAt = (skill: string, s: number) => {
      const last = events.filter((e) => e.skillId === skill && e.step <= s).at(-1);
      return last ? (last.event === 'learned' ? 'mastered' : 'forgotten') : 'never';
    };
    const colours = () =>
      page.evaluate(
        () =>
          Object.fromEntries(
            (globalThis as any).cogenDashboard.cy.nodes().map((n: any) => [n.id(), n.style('background-color')]),
          ) as Record<string, string>,
      );
    const moveTo = async (s: number) => {
      await page.locator('#step-slider').fill(String(s));
      await page.waitForFunction((v) => (globalThis as any).cogenDashboard.skillsAt === v, s);
    };
    expect(await page.locator('#step-slider').getAttribute('max')).toBe(String(lastStep));

    await moveTo(first.step - 1);
    const before = await colours();
    expect(hex(before[first.skillId]!)).toBe(STATE_COLOR[stateAt(first.skillId, first.step - 1)]);
    expect(hex(before[first.skillId]!)).toBe(STATE_COLOR.never);
    await moveTo(first.step);
    const after = await colours();
    expect(hex(after[first.skillId]!)).toBe(STATE_COLOR.mastered);
    // Every skill, at every step of the slider, as the timeline says.
    for (let s = 0; s <= lastStep; s++) {
      await moveTo(s);
      const c = await colours();
      for (const [skill, colour] of Object.entries(c))
        expect(hex(colour), `${skill} at step ${s}`).toBe(STATE_COLOR[stateAt(skill, s)]);
    }
    await page.locator('#skills').screenshot({ path: join(ARTIFACTS, 'dashboard-skills.png') });
    if (UPDATE_DOCS) copyFileSync(join(ARTIFACTS, 'dashboard-skills.png'), join(ROOT, 'docs', 'dashboard-skills.png'));

    // The LLM proposals, by outcome, as the store counts them.
    const pdb = new Database(join(runsDir, 'oracle', 'run.db'), { readonly: true });
    const outcomes = pdb.prepare('SELECT outcome, COUNT(*) n FROM proposals GROUP BY outcome').all() as {
      outcome: string;
      n: number;
    }[];
    pdb.close();
    expect(outcomes.length).toBeGreaterThan(0);
    await page.waitForSelector('#proposals:not([hidden])');
    for (const o of outcomes)
      expect(await page.locator(`#proposals [data-outcome="${o.outcome}"] strong`).textContent()).toBe(String(o.n));
    await page.close();
  });

  it('the task browser finds a task by family and level and shows its program, answers and lineage', async () => {
    const page = await browser.newPage({ viewport: { width: 1360, height: 1000 } });
    await page.goto(`${dash.url}/run/smoke`);
    await page.waitForSelector('tr.task-row');
    await page.selectOption('#task-family', 'logic');
    await page.selectOption('#task-level', '0');
    await page.waitForFunction(() =>
      [...(globalThis as any).document.querySelectorAll('tr.task-row td:nth-child(3)')].every((td: any) =>
        td.textContent.startsWith('logic/0/'),
      ),
    );
    const id = await page.locator('tr.task-row').first().getAttribute('data-task-id');
    await page.locator('tr.task-row').first().click();
    await page.waitForSelector('#task-detail pre.program');
    const db = new Database(join(runsDir, 'smoke', 'run.db'), { readonly: true });
    const task = db.prepare('SELECT program, natural FROM tasks WHERE id = ?').get(id) as {
      program: string;
      natural: string;
    };
    const episodes = (db.prepare('SELECT COUNT(*) n FROM episodes WHERE task_id = ?').get(id) as { n: number }).n;
    db.close();
    expect(await page.locator('#task-detail pre.program').textContent()).toBe(task.program);
    expect(await page.locator('#task-detail pre.prompt').textContent()).toBe(task.natural);
    expect((await page.locator('#task-detail pre.reference').textContent())!.length).toBeGreaterThan(0);
    expect(await page.locator('#task-detail table.episodes tbody tr').count()).toBe(episodes);
    await page.locator('#tasks').screenshot({ path: join(ARTIFACTS, 'dashboard-task.png') });
    await page.close();
  });
});
