// bench:served-restart — crashes around a trainer on the live curriculum, and what the run kept.
// On a seed drawn at random (printed; `--seeds 7` replays), examples/trl_curriculum.py, warm-started
// on another run's tasks (so that its rewards are not all 0), trains on a served run of the default
// preset, logging every score request the server acknowledged:
//   1. the trainer is killed with SIGKILL once it has saved checkpoint `--kill-at`, and resumed from
//      its newest checkpoint (`--resume`: ignore_data_skip, no live batch drawn and thrown away);
//   2. once it has saved checkpoint 2 × `--kill-at`, the server is killed with SIGKILL and resumed
//      with `cogen serve --resume` on the same port (the trainer, cut off, is resumed again);
//   3. the trainer runs to `--steps`, and the server is stopped.
// Then the run's store is read back: every acknowledged request is there once, with the same
// groups; no request is there without an acknowledgement, beyond one per trainer cut off (a commit
// whose reply the kill cut off); the counters agree with the rows; and the resumed server started
// from the curriculum state stored at the kill. Writes bench/results/served-restart.{json,md}.
//
//   npx tsx bench/served-restart.ts [--seeds random:1] [--steps 60 --kill-at 20] [--setup-torch]
// Needs torch and TRL (bench/torch-venv.ts; not CI).
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServe, stopChild, warmStartData, type ServeChild } from './served-child.js';
import { seedsArg } from './stats.js';
import { torchPython } from './torch-venv.js';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: 'random:1' },
    steps: { type: 'string', default: '60' },
    'kill-at': { type: 'string', default: '20' },
    'sft-steps': { type: 'string', default: '300' },
    'setup-torch': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results' },
  },
});
const ROOT = join(import.meta.dirname, '..');
const KILL_AT = Number(args['kill-at']);

interface Ack {
  key: string;
  items: [string, number][];
}
interface Check {
  name: string;
  ok: boolean;
  detail: string;
}
interface SeedResult {
  seed: number;
  events: string[];
  acks: number;
  storedRequests: number;
  checks: Check[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const exited = (p: ChildProcess): Promise<number | null> =>
  new Promise((ok) => (p.exitCode !== null || p.signalCode !== null ? ok(p.exitCode) : p.once('exit', (c) => ok(c))));

async function until(what: string, cond: () => boolean, seconds = 900): Promise<void> {
  for (let i = 0; i < seconds * 4; i++) {
    if (cond()) return;
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function trainer(python: string, url: string, out: string, seed: number, resume: boolean): ChildProcess {
  const warm = ['--warm', join(out, '..', 'warm.jsonl'), '--sft-steps', args['sft-steps']!];
  const argv = [
    join(ROOT, 'examples/trl_curriculum.py'),
    ...['--url', url, '--out', out, '--seed', String(seed), '--steps', args.steps!, ...warm],
    ...['--save-steps', String(KILL_AT / 2), '--tasks', '16', '--generations', '4'],
    ...['--ack-log', join(out, 'acks.jsonl'), ...(resume ? ['--resume'] : [])],
  ];
  return spawn(python, argv, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** The curriculum state a served run keeps (its controller, rng, mastery and counters), as stored. */
function storedState(db: string): string {
  const d = new Database(db, { readonly: true });
  try {
    return (d.prepare("SELECT value FROM meta WHERE key = 'served'").get() as { value: string }).value;
  } finally {
    d.close();
  }
}

const WINDOW = 5;
const meanReward = (acks: Ack[]): string => {
  const rewards = acks.flatMap((a) => a.items.map(([, r]) => r));
  return (rewards.reduce((x, y) => x + y, 0) / Math.max(1, rewards.length)).toFixed(3);
};

function readAcks(path: string): Ack[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Ack);
}

/** Every acknowledged request stored once with its groups; nothing stored unacknowledged beyond `kills`; counters = rows. */
function checkStore(db: string, acks: Ack[], kills: number, completions: number): { checks: Check[]; stored: number } {
  const d = new Database(db, { readonly: true });
  try {
    const requests = d.prepare('SELECT key, step FROM requests').all() as { key: string; step: number }[];
    const stepOf = new Map(requests.map((r) => [r.key, r.step]));
    const rowsAt = d.prepare('SELECT task_id, solved, attempts FROM task_scores WHERE step = ?');
    const missing = acks.filter((a) => !stepOf.has(a.key));
    const differing = acks.filter((a) => {
      const step = stepOf.get(a.key);
      if (step === undefined) return false;
      const want = new Map<string, { solved: number; attempts: number }>();
      for (const [task, reward] of a.items) {
        const g = want.get(task) ?? { solved: 0, attempts: 0 };
        want.set(task, { solved: g.solved + (reward >= 1 ? 1 : 0), attempts: g.attempts + 1 });
      }
      const got = rowsAt.all(step) as { task_id: string; solved: number; attempts: number }[];
      return (
        got.length !== want.size ||
        got.some((r) => want.get(r.task_id)?.solved !== r.solved || want.get(r.task_id)?.attempts !== r.attempts)
      );
    });
    const acked = new Set(acks.map((a) => a.key));
    const unacked = requests.filter((r) => !acked.has(r.key)).length;
    const { attempts } = d.prepare('SELECT COALESCE(SUM(attempts), 0) AS attempts FROM task_scores').get() as {
      attempts: number;
    };
    const checks = [
      {
        name: 'every acknowledged request is stored',
        ok: missing.length === 0,
        detail: `${missing.length} of ${acks.length} missing`,
      },
      {
        name: 'stored once, with the acknowledged groups',
        ok: differing.length === 0,
        detail: `${differing.length} differ`,
      },
      {
        name: `stored without an acknowledgement: at most one per trainer cut off (${kills})`,
        ok: unacked <= kills,
        detail: `${unacked}`,
      },
      {
        name: 'the counters agree with the rows',
        ok: attempts === completions,
        detail: `/v1/stats completions ${completions}, rows ${attempts}`,
      },
    ];
    return { checks, stored: requests.length };
  } finally {
    d.close();
  }
}

async function stats(url: string): Promise<{ step: number; completions: number }> {
  return (await (await fetch(url + '/v1/stats')).json()) as { step: number; completions: number };
}

async function runSeed(seed: number, python: string, dir: string): Promise<SeedResult> {
  const runsDir = join(dir, 'runs');
  const runId = `served-${seed}`;
  const db = join(runsDir, runId, 'run.db');
  const out = join(dir, 'trainer');
  mkdirSync(out, { recursive: true });
  const events: string[] = [];
  const note = (e: string) => {
    events.push(e);
    process.stderr.write(`seed ${seed}: ${e}\n`);
  };
  const checkpoint = (n: number) => () => existsSync(join(out, 'grpo', `checkpoint-${n}`, 'trainer_state.json'));
  let server: ServeChild = await startServe([
    ...['--preset', 'default', '--seed', String(seed), '--runs-dir', runsDir, '--run-id', runId],
  ]);
  try {
    const source = { runsDir, preset: 'default', sourceSeed: seed + 1, steps: '30', served: runId };
    warmStartData({ ...source, out: join(dir, 'warm.jsonl') });
    let t = trainer(python, server.url, out, seed, false);
    await until(`checkpoint-${KILL_AT}`, checkpoint(KILL_AT));
    await sleep(1500); // into the next step, between a sample and its score
    await stopChild(t, 'SIGKILL');
    const beforeKill = readAcks(join(out, 'acks.jsonl')).length;
    note(`trainer killed (SIGKILL) after checkpoint-${KILL_AT}, ${beforeKill} acknowledged requests logged`);
    t = trainer(python, server.url, out, seed, true);
    note('trainer resumed from its newest checkpoint');
    await until(`checkpoint-${2 * KILL_AT}`, checkpoint(2 * KILL_AT));
    await sleep(1500);
    await stopChild(server.child, 'SIGKILL');
    const atKill = storedState(db);
    note(`server killed (SIGKILL) after the trainer's checkpoint-${2 * KILL_AT}`);
    const cut = await Promise.race([exited(t), sleep(60_000).then(() => 'running' as const)]);
    if (cut === 'running') await stopChild(t, 'SIGKILL');
    note(
      `the trainer, cut off from the server: ${cut === 'running' ? 'still retrying after 60 s, killed' : `exited with ${cut}`}`,
    );
    server = await startServe(['--resume', runId, '--runs-dir', runsDir], server.port);
    const resumedState = storedState(db);
    const before = await stats(server.url);
    note(`server resumed (--resume ${runId}) at step ${before.step}`);
    const stateCheck: Check = {
      name: 'the resumed server starts from the curriculum state stored at the kill',
      ok: resumedState === atKill,
      detail: resumedState === atKill ? `same state, step ${before.step}` : 'the stored state changed on resume',
    };
    t = trainer(python, server.url, out, seed, true);
    const code = await exited(t);
    note(`trainer resumed again, ran to --steps ${args.steps}: exit ${code}`);
    if (code !== 0) throw new Error(`the last trainer exited with ${code}`);
    const { completions } = await stats(server.url);
    await stopChild(server.child);
    const acks = readAcks(join(out, 'acks.jsonl'));
    const [lastAcks, nextAcks] = [
      acks.slice(beforeKill - WINDOW, beforeKill),
      acks.slice(beforeKill, beforeKill + WINDOW),
    ];
    note(
      `mean reward of the ${WINDOW} requests before the first kill / the ${WINDOW} after: ${meanReward(lastAcks)} / ${meanReward(nextAcks)}`,
    );
    // A request committed whose reply never reached the log: one at most per trainer cut off
    // (the one killed, and the one whose server was killed).
    const { checks, stored } = checkStore(db, acks, 2, completions);
    return { seed, events, acks: acks.length, storedRequests: stored, checks: [stateCheck, ...checks] };
  } finally {
    await stopChild(server.child);
  }
}

function report(rows: SeedResult[]): string {
  return (
    [
      '# bench:served-restart',
      '',
      `examples/trl_curriculum.py on \`cogen serve --preset default\`, killed and resumed (\`--steps ${args.steps}\`, kill at checkpoint ${KILL_AT} and ${2 * KILL_AT}). Seeds: ${rows.map((r) => r.seed).join(', ')}.`,
      '',
      ...rows.flatMap((r) => [
        `## seed ${r.seed}: ${r.acks} acknowledged requests logged, ${r.storedRequests} stored`,
        '',
        ...r.events.map((e) => `1. ${e}`),
        '',
        '| check | holds | detail |',
        '| --- | --- | --- |',
        ...r.checks.map((c) => `| ${c.name} | ${c.ok ? 'yes' : '**no**'} | ${c.detail} |`),
        '',
      ]),
    ].join('\n') + '\n'
  );
}

async function main(): Promise<void> {
  const py = torchPython(args['setup-torch']);
  if ('error' in py) throw new Error(py.error);
  const { seeds, drawn } = seedsArg(args.seeds!);
  process.stderr.write(`bench:served-restart: seeds (${drawn ? 'drawn at random' : 'given'}) ${seeds.join(',')}\n`);
  const rows: SeedResult[] = [];
  for (const seed of seeds)
    rows.push(await runSeed(seed, py.python, join(tmpdir(), `cogen-served-restart-${process.pid}`, String(seed))));
  mkdirSync(args.out!, { recursive: true });
  writeFileSync(
    join(args.out!, 'served-restart.json'),
    JSON.stringify({ seedsDrawn: drawn, seeds: rows }, null, 1) + '\n',
  );
  writeFileSync(join(args.out!, 'served-restart.md'), report(rows));
  process.stdout.write(report(rows));
  if (rows.some((r) => r.checks.some((c) => !c.ok))) process.exitCode = 1;
}

main().catch((e: Error) => {
  process.stderr.write(`bench:served-restart: ${e.message}\n`);
  process.exit(1);
});
