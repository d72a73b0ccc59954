// npm run bench:sandbox — verifications per second of cogen's sandbox against the alternatives,
// side by side in one run (this machine is shared and noisy: compare the ratios).
//
//   cogen      the QuickJS worker pool (fresh context per call), through verifyMany
//   python     an Absolute-Zero-style executor: persistent python3 workers that exec each program
//              in a fresh globals dict with a SIGALRM timeout (one worker per core, like the pool)
//   node:vm    vm.runInNewContext with a fresh context per call, on the main thread
//   vm2        new VM({timeout}).run per call, on the main thread
//
// Two program sets: PAIRED (ten realistic task programs written in both JavaScript and Python, the
// same inputs, so every executor runs the same work) and GENERATED (programs and inputs drawn from
// cogen's generators, levels 0–3, all families and task types; JavaScript only, so cogen, node:vm
// and vm2). A verification = run f on one input and compare with the expected output.
// Results: a table on stdout and bench/results/sandbox.json.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import { createSandbox, verifyMany } from '../sandbox/index.js';
import type { Json, Task } from '../src/task.js';
import { createRng } from '../src/rng.js';
import { families } from '../generators/index.js';
import { TASK_TYPES } from '../src/task.js';

const require = createRequire(import.meta.url);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);

interface Job {
  program: string;
  py?: string;
  args: Json[];
}

// ---------------------------------------------------------------- the paired program set
const PAIRED: { js: string; py: string; input: (r: ReturnType<typeof createRng>) => Json[] }[] = [
  {
    js: 'function f(a, b) { return a * b + a - b }',
    py: 'def f(a, b):\n    return a * b + a - b',
    input: (r) => [r.int(-99, 99), r.int(-99, 99)],
  },
  {
    js: 'function f(s) { return s.split("").reverse().join("") }',
    py: 'def f(s):\n    return s[::-1]',
    input: (r) => [word(r, r.int(3, 12))],
  },
  {
    js: 'function f(xs) { let t = 0; for (const x of xs) if (x % 2 === 0) t += x; return t }',
    py: 'def f(xs):\n    t = 0\n    for x in xs:\n        if x % 2 == 0:\n            t += x\n    return t',
    input: (r) => [ints(r, r.int(3, 10))],
  },
  {
    js: 'function f(xs) { return xs.filter((x) => x % 3 !== 0).map((x) => x * x) }',
    py: 'def f(xs):\n    return [x * x for x in xs if x % 3 != 0]',
    input: (r) => [ints(r, r.int(3, 10))],
  },
  {
    js: 'function f(n) { let a = 0, b = 1; for (let i = 0; i < n; i++) { const t = a + b; a = b; b = t } return a }',
    py: 'def f(n):\n    a, b = 0, 1\n    for i in range(n):\n        a, b = b, a + b\n    return a',
    input: (r) => [r.int(0, 30)],
  },
  {
    js: 'function f(s) { let c = 0; for (const ch of s) if ("aeiou".includes(ch)) c++; return c }',
    py: 'def f(s):\n    c = 0\n    for ch in s:\n        if ch in "aeiou":\n            c += 1\n    return c',
    input: (r) => [word(r, r.int(3, 16))],
  },
  {
    js: 'function f(xs) { let best = 0, run = 0; for (let i = 0; i < xs.length; i++) { run = i > 0 && xs[i] === xs[i - 1] ? run + 1 : 1; if (run > best) best = run } return best }',
    py: 'def f(xs):\n    best, run = 0, 0\n    for i in range(len(xs)):\n        run = run + 1 if i > 0 and xs[i] == xs[i - 1] else 1\n        if run > best:\n            best = run\n    return best',
    input: (r) => [Array.from({ length: r.int(3, 12) }, () => r.int(0, 2))],
  },
  {
    js: 'function f(a, b) { return b === 0 ? a : f(b, a % b) }',
    py: 'def f(a, b):\n    return a if b == 0 else f(b, a % b)',
    input: (r) => [r.int(1, 999), r.int(1, 999)],
  },
  {
    js: 'function f(xs) { return { min: Math.min(...xs), max: Math.max(...xs), len: xs.length } }',
    py: 'def f(xs):\n    return {"min": min(xs), "max": max(xs), "len": len(xs)}',
    input: (r) => [ints(r, r.int(1, 10))],
  },
  {
    js: 'function f(x, lo, hi) { if (x < lo) return lo; if (x > hi) return hi; return x }',
    py: 'def f(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x',
    input: (r) => [r.int(-50, 50), r.int(-20, 0), r.int(0, 20)],
  },
];

function word(r: ReturnType<typeof createRng>, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += 'abcdefghijklmnopqrstuvwxyz'[r.int(0, 25)];
  return s;
}
const ints = (r: ReturnType<typeof createRng>, n: number): number[] => Array.from({ length: n }, () => r.int(-20, 20));

function pairedJobs(n: number): Job[] {
  const r = createRng('bench-paired');
  return Array.from({ length: n }, (_, i) => {
    const p = PAIRED[i % PAIRED.length]!;
    return { program: p.js, py: p.py, args: p.input(r) };
  });
}

function generatedJobs(n: number): Job[] {
  const r = createRng('bench-generated');
  const jobs: Job[] = [];
  let guard = 0;
  while (jobs.length < n && guard++ < n * 10) {
    const fam = r.pick(families);
    const level = r.int(0, 3);
    const type = r.pick(TASK_TYPES);
    try {
      const d = fam.generate(r.fork(jobs.length), level, type);
      for (const input of d.inputs) if (jobs.length < n) jobs.push({ program: d.program, args: input });
    } catch {
      // a family that cannot draw this combination: skip it
    }
  }
  return jobs;
}

// ---------------------------------------------------------------- executors
type Outcome = { ok: true; json: string } | { ok: false };

async function timeIt(label: string, jobs: Job[], runAll: (jobs: Job[]) => Promise<Outcome[]>, expected: (string | null)[]): Promise<{ rate: number; agree: number; n: number; seconds: number }> {
  // One warm-up pass, then whole passes until SECONDS have elapsed.
  const first = await runAll(jobs);
  let agree = 0;
  first.forEach((o, i) => {
    if ((o.ok ? o.json : null) === expected[i]) agree++;
  });
  let n = 0;
  const t0 = performance.now();
  do {
    await runAll(jobs);
    n += jobs.length;
  } while (performance.now() - t0 < SECONDS * 1000);
  const seconds = (performance.now() - t0) / 1000;
  process.stderr.write(`  ${label}: ${(n / seconds).toFixed(0)}/s\n`);
  return { rate: n / seconds, agree: agree / jobs.length, n, seconds };
}

const canon = (v: unknown): string => JSON.stringify(v);

function nodeVm(timeoutMs: number) {
  return async (jobs: Job[]): Promise<Outcome[]> =>
    jobs.map((j) => {
      try {
        const v = vm.runInNewContext(`${j.program}\n;JSON.stringify(f(...${JSON.stringify(j.args)}))`, {}, { timeout: timeoutMs });
        return typeof v === 'string' ? { ok: true, json: canon(JSON.parse(v)) } : { ok: false };
      } catch {
        return { ok: false };
      }
    });
}

function vm2Runner(timeoutMs: number) {
  const { VM } = require('vm2') as { VM: new (o: { timeout: number; sandbox: object; eval: boolean; wasm: boolean }) => { run(code: string): unknown } };
  return async (jobs: Job[]): Promise<Outcome[]> =>
    jobs.map((j) => {
      try {
        const v = new VM({ timeout: timeoutMs, sandbox: {}, eval: false, wasm: false }).run(`${j.program}\n;JSON.stringify(f(...${JSON.stringify(j.args)}))`);
        return typeof v === 'string' ? { ok: true, json: canon(JSON.parse(v)) } : { ok: false };
      } catch {
        return { ok: false };
      }
    });
}

// The Absolute-Zero-style executor: a long-lived python3 process per worker that reads one JSON
// request per line, execs the program in a fresh globals dict (sharing the real builtins module,
// as exec does), calls f with a SIGALRM timeout, and writes one JSON line back.
const PY_WORKER = String.raw`
import sys, json, signal
class Timeout(Exception):
    pass
def on_alarm(signum, frame):
    raise Timeout()
signal.signal(signal.SIGALRM, on_alarm)
out = sys.stdout
for line in sys.stdin:
    req = json.loads(line)
    try:
        signal.setitimer(signal.ITIMER_REAL, req["t"])
        g = {}
        exec(req["code"], g)
        r = g["f"](*req["args"])
        signal.setitimer(signal.ITIMER_REAL, 0)
        out.write(json.dumps({"ok": True, "v": r}) + "\n")
    except BaseException as e:
        signal.setitimer(signal.ITIMER_REAL, 0)
        out.write(json.dumps({"ok": False, "e": type(e).__name__}) + "\n")
    out.flush()
`;

async function pythonPool(workers: number, timeoutMs: number) {
  const procs = Array.from({ length: workers }, () => {
    const p = spawn('python3', ['-u', '-c', PY_WORKER], { stdio: ['pipe', 'pipe', 'inherit'] });
    let buf = '';
    const waiting: ((line: string) => void)[] = [];
    p.stdout.setEncoding('utf8');
    p.stdout.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        waiting.shift()?.(line);
      }
    });
    return { p, waiting };
  });
  const runAll = async (jobs: Job[]): Promise<Outcome[]> => {
    const out: Outcome[] = new Array(jobs.length);
    await Promise.all(
      procs.map(async (w, k) => {
        const mine: number[] = [];
        for (let i = k; i < jobs.length; i += procs.length) mine.push(i);
        const done = mine.map((i) => new Promise<void>((res) => w.waiting.push((line) => {
          const r = JSON.parse(line) as { ok: boolean; v?: Json };
          out[i] = r.ok ? { ok: true, json: canon(r.v) } : { ok: false };
          res();
        })));
        // Requests are pipelined (written all at once), the most favourable way to drive it.
        w.p.stdin.write(mine.map((i) => JSON.stringify({ code: jobs[i]!.py, args: jobs[i]!.args, t: timeoutMs / 1000 })).join('\n') + '\n');
        await Promise.all(done);
      }),
    );
    return out;
  };
  const close = () => procs.forEach((w) => w.p.kill());
  return { runAll, close };
}

function asAbduction(j: Job, output: Json, i: number): Task {
  return { id: `b${i}`, family: 'bench', level: 0, skills: [], program: j.program, hash: '', parent: null, proposer: 'bench', type: 'abduction', input: j.args, output };
}

async function main(): Promise<void> {
  const workers = availableParallelism();
  const sandbox = await createSandbox();
  const timeoutMs = sandbox.limits.timeoutMs;
  const paired = pairedJobs(2000);
  const generated = generatedJobs(2000);

  // Reference outputs come from cogen's sandbox.
  const ref = async (jobs: Job[]) => (await sandbox.runMany(jobs.map((j) => ({ program: j.program, args: j.args })))).map((r) => (r.ok ? canon(r.value) : null));
  const refPaired = await ref(paired);
  const refGenerated = await ref(generated);

  const cogen = (jobs: Job[], expected: (string | null)[]) => {
    const items = jobs.map((j, i) => ({ task: asAbduction(j, expected[i] === null ? null : (JSON.parse(expected[i]!) as Json), i), answer: JSON.stringify(j.args) }));
    return async (): Promise<Outcome[]> => {
      const vs = await verifyMany(sandbox, items);
      return vs.map((v, i) => (v.reward === 1 ? { ok: true, json: expected[i]! } : { ok: false }));
    };
  };

  process.stderr.write(`sandbox bench: ${workers} cores (${cpus()[0]?.model ?? '?'}), ${SECONDS}s per measurement\n`);
  const rows: { set: string; executor: string; rate: number; agree: number; note: string }[] = [];
  const add = (set: string, executor: string, r: { rate: number; agree: number }, note: string) => rows.push({ set, executor, rate: r.rate, agree: r.agree, note });

  add('paired', 'cogen', await timeIt('paired/cogen', paired, cogen(paired, refPaired), refPaired), `${workers} workers, fresh QuickJS context per call`);
  const py = await pythonPool(workers, timeoutMs);
  try {
    add('paired', 'python', await timeIt('paired/python', paired, py.runAll, refPaired), `${workers} persistent python3 exec workers (Absolute Zero style)`);
  } finally {
    py.close();
  }
  add('paired', 'node:vm', await timeIt('paired/node:vm', paired.slice(0, 500), nodeVm(timeoutMs), refPaired), 'main thread, fresh context per call');
  add('paired', 'vm2', await timeIt('paired/vm2', paired.slice(0, 500), vm2Runner(timeoutMs), refPaired), 'main thread, fresh VM per call');
  add('generated', 'cogen', await timeIt('generated/cogen', generated, cogen(generated, refGenerated), refGenerated), `${workers} workers, fresh QuickJS context per call`);
  add('generated', 'node:vm', await timeIt('generated/node:vm', generated.slice(0, 500), nodeVm(timeoutMs), refGenerated), 'main thread, fresh context per call');
  add('generated', 'vm2', await timeIt('generated/vm2', generated.slice(0, 500), vm2Runner(timeoutMs), refGenerated), 'main thread, fresh VM per call');
  await sandbox.close();

  const rate = (set: string, ex: string) => rows.find((r) => r.set === set && r.executor === ex)?.rate ?? NaN;
  const cogenPaired = rate('paired', 'cogen');
  const lines = [
    `set        executor   verif/s   cogen÷this   agrees   note`,
    ...rows.map((r) => `${r.set.padEnd(10)} ${r.executor.padEnd(9)} ${r.rate.toFixed(0).padStart(8)}   ${(rate(r.set, 'cogen') / r.rate).toFixed(2).padStart(10)}   ${(r.agree * 100).toFixed(1).padStart(5)}%   ${r.note}`),
  ];
  console.log(lines.join('\n'));
  const pyRatio = cogenPaired / rate('paired', 'python');
  console.log(`\ntargets: cogen ≥ 5000 verif/s (${cogenPaired.toFixed(0)} paired, ${rate('generated', 'cogen').toFixed(0)} generated) · cogen ≥ 5× python (${pyRatio.toFixed(2)}×)`);

  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('./results/sandbox.json', import.meta.url),
    JSON.stringify(
      {
        bench: 'sandbox',
        date: new Date().toISOString(),
        machine: { cores: workers, cpu: cpus()[0]?.model ?? null, node: process.version },
        secondsPerMeasurement: SECONDS,
        limits: { timeoutMs },
        rows,
        ratios: { cogenOverPython: pyRatio, cogenOverNodeVm: cogenPaired / rate('paired', 'node:vm'), cogenOverVm2: cogenPaired / rate('paired', 'vm2') },
        targets: { verificationsPerSecond: 5000, overPython: 5 },
      },
      null,
      2,
    ) + '\n',
  );
}

await main();
