// The executors that bench:sandbox compares (see bench/sandbox.ts's header): cogen's verifyMany, a
// context per task or per verification; node:vm and vm2 on the main thread; and persistent python3
// workers, exec per verification (Absolute Zero's way) or per task.
import { spawn } from 'node:child_process';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import { deepEqual, verifyMany } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/index.js';
import type { Json, Task } from '../core/task.js';
import type { BenchTask } from './sandbox-tasks.js';

const require = createRequire(import.meta.url);

/** Runs one step (B tasks) and returns the rewards of its B × G verifications, in order. */
export type StepRunner = (step: BenchTask[]) => Promise<number[]>;

function asAbduction(t: BenchTask, i: number): Task {
  return {
    id: `b${i}`,
    family: 'bench',
    level: 0,
    skills: [],
    program: t.program,
    hash: '',
    parent: null,
    proposer: 'bench',
    type: 'abduction',
    input: t.answers[0]!,
    output: t.output!,
  };
}

/** cogen through verifyMany, as the loop calls it: one task object per task, G answers each. */
export function cogenRunner(sandbox: Sandbox, perCall: boolean): StepRunner {
  const taskOf = new Map<BenchTask, Task>();
  return async (step) => {
    const items: { task: Task; answer: string }[] = [];
    for (const t of step) {
      let task = taskOf.get(t);
      if (!task) taskOf.set(t, (task = asAbduction(t, taskOf.size)));
      // perCall: a distinct (equal) task object per answer, so that each answer gets a context.
      for (const a of t.answers) items.push({ task: perCall ? { ...task } : task, answer: JSON.stringify(a) });
    }
    return (await verifyMany(sandbox, items)).map((v) => v.reward);
  };
}

const js = (v: unknown): string => JSON.stringify(v);

export function nodeVm(timeoutMs: number): StepRunner {
  return async (step) =>
    step.flatMap((t) =>
      t.answers.map((a) => {
        try {
          const v = vm.runInNewContext(`${t.program}\n;JSON.stringify(f(...${js(a)}))`, {}, { timeout: timeoutMs });
          return typeof v === 'string' && deepEqual(JSON.parse(v) as Json, t.output!) ? 1 : 0;
        } catch {
          return 0;
        }
      }),
    );
}

export function vm2Runner(timeoutMs: number): StepRunner {
  const { VM } = require('vm2') as {
    VM: new (o: { timeout: number; sandbox: object; eval: boolean; wasm: boolean }) => { run(code: string): unknown };
  };
  return async (step) =>
    step.flatMap((t) =>
      t.answers.map((a) => {
        try {
          const v = new VM({ timeout: timeoutMs, sandbox: {}, eval: false, wasm: false }).run(
            `${t.program}\n;JSON.stringify(f(...${js(a)}))`,
          );
          return typeof v === 'string' && deepEqual(JSON.parse(v) as Json, t.output!) ? 1 : 0;
        } catch {
          return 0;
        }
      }),
    );
}

// The Absolute-Zero-style executor: a long-lived python3 process per worker that reads one JSON
// request per line and writes one JSON line back. A request holds a program, its answers and the
// target; "per" says whether to exec the program once per answer (as Absolute Zero does: each
// check runs program + call as one snippet) or once for all of them.
const PY_WORKER = String.raw`
import sys, json, signal
class Timeout(Exception):
    pass
def on_alarm(signum, frame):
    raise Timeout()
signal.signal(signal.SIGALRM, on_alarm)
out = sys.stdout
def call(g, args, want, t):
    try:
        signal.setitimer(signal.ITIMER_REAL, t)
        r = g["f"](*args)
        signal.setitimer(signal.ITIMER_REAL, 0)
        return 1 if r == want else 0
    except BaseException:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return 0
for line in sys.stdin:
    req = json.loads(line)
    t = req["t"]
    rewards = []
    if req["per"]:
        for args in req["answers"]:
            g = {}
            try:
                signal.setitimer(signal.ITIMER_REAL, t)
                exec(req["code"], g)
                signal.setitimer(signal.ITIMER_REAL, 0)
                rewards.append(call(g, args, req["want"], t))
            except BaseException:
                signal.setitimer(signal.ITIMER_REAL, 0)
                rewards.append(0)
    else:
        g = {}
        try:
            signal.setitimer(signal.ITIMER_REAL, t)
            exec(req["code"], g)
            signal.setitimer(signal.ITIMER_REAL, 0)
            rewards = [call(g, args, req["want"], t) for args in req["answers"]]
        except BaseException:
            signal.setitimer(signal.ITIMER_REAL, 0)
            rewards = [0 for _ in req["answers"]]
    out.write(json.dumps(rewards) + "\n")
    out.flush()
`;

export function pythonPool(workers: number, timeoutMs: number) {
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
  /**
   * perVerification: one request per answer, exec each time (Absolute Zero's way); otherwise one
   * request per task. Requests are spread round-robin over the workers and pipelined.
   */
  const runner =
    (perVerification: boolean): StepRunner =>
    async (step) => {
      const reqs: { code: string; answers: Json[][]; want: Json }[] = [];
      for (const t of step) {
        if (perVerification) for (const a of t.answers) reqs.push({ code: t.py!, answers: [a], want: t.output! });
        else reqs.push({ code: t.py!, answers: t.answers, want: t.output! });
      }
      const out: number[][] = new Array(reqs.length);
      await Promise.all(
        procs.map(async (w, k) => {
          const mine: number[] = [];
          for (let i = k; i < reqs.length; i += procs.length) mine.push(i);
          if (mine.length === 0) return;
          const done = mine.map(
            (i) =>
              new Promise<void>((res) =>
                w.waiting.push((line) => {
                  out[i] = JSON.parse(line) as number[];
                  res();
                }),
              ),
          );
          w.p.stdin.write(
            mine.map((i) => js({ ...reqs[i]!, t: timeoutMs / 1000, per: perVerification })).join('\n') + '\n',
          );
          await Promise.all(done);
        }),
      );
      return out.flat();
    };
  const close = () => procs.forEach((w) => w.p.kill());
  return { runner, close };
}
