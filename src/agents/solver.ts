// An LLM as the solver, for evaluation only (docs/DESIGN.md, "Solver and the GRPO family", last
// paragraph). It implements the loop's Policy: it answers the tasks' natural-language renderings,
// its final answer is extracted from a fenced block or an `ANSWER:` line, and the sandbox verifies
// it like any other answer. It trains nothing; pass@k over the G samples is computed by passAtK.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AnswerKind } from '../../core/task.js';
import { solvedCount } from '../../core/rules.js';
import type { Policy, Rollout, TrainStats } from '../solver/index.js';
import type { LlmSolverConfig } from './config.js';
import {
  chatMessages,
  createChatClient,
  LlmCallError,
  redactSecrets,
  type ChatUsage,
  type ClientDeps,
  type TokenCount,
} from './model.js';
import { solverSystemPrompt } from '../../generators/index.js';
import { extractAnswer } from '../../sandbox/index.js';

// ---------------------------------------------------------------------------------------------
// pass@k.

/** Unbiased pass@k for one prompt with n samples of which c passed (Chen et al., 2021): 1 − C(n−c, k)/C(n, k). */
export function passAtKGroup(n: number, c: number, k: number): number {
  if (!(k >= 1) || !(n >= 1)) throw new RangeError(`passAtK: need n ≥ 1 and k ≥ 1 (n=${n}, k=${k})`);
  if (c < 0 || c > n) throw new RangeError(`passAtK: c=${c} outside 0…${n}`);
  const kk = Math.min(k, n);
  if (n - c < kk) return 1;
  // 1 − Π_{i=n−c+1}^{n} (1 − k/i), the numerically stable form.
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - kk / i;
  return 1 - prod;
}

/**
 * Mean unbiased pass@k over groups (rewards[g][i], a sample passes when its reward is ≥ 1). A group
 * with fewer than k samples is scored at k = its size. An empty list gives 0.
 */
export function passAtK(rewards: number[][], k: number): number {
  const groups = rewards.filter((g) => g.length > 0);
  if (groups.length === 0) return 0;
  let sum = 0;
  for (const g of groups) sum += passAtKGroup(g.length, solvedCount(g), k);
  return sum / groups.length;
}

// ---------------------------------------------------------------------------------------------
// The policy.

export interface LlmCallRecord {
  /** Index of the prompt in its batch. */
  group: number;
  mode: 'sample' | 'greedy';
  tokens: TokenCount;
  ms: number;
  attempts: number;
  /** Set when the call failed after its retries (the answer is then ''). */
  error?: 'timeout' | 'unreachable';
}

/** The LLM's rollout: the answers extracted from its replies, and the replies. */
export interface LlmRollout extends Rollout {
  /** The raw replies, replies[g][i] (secrets redacted). */
  readonly replies: string[][];
}

export interface LlmPolicy extends Policy<LlmRollout> {
  /** Per-call records since the last call of takeCalls (then cleared): for token metrics. */
  takeCalls(): LlmCallRecord[];
  /** Totals since creation. */
  usage(): ChatUsage;
}

export interface LlmSolverDeps extends Omit<ClientDeps, 'role'> {
  log: (line: string) => void;
}

const POLICY_FILE = 'llm-policy.json';

export function createLlmPolicy(cfg: LlmSolverConfig, deps: LlmSolverDeps): LlmPolicy {
  const client = createChatClient(cfg, { ...deps, role: 'solver' });
  const log = (line: string) => deps.log(redactSecrets(line, deps.env));
  let records: LlmCallRecord[] = [];

  async function ask(
    text: string,
    kind: AnswerKind,
    group: number,
    mode: 'sample' | 'greedy',
  ): Promise<{ reply: string; answer: string }> {
    try {
      const res = await client.call(chatMessages(solverSystemPrompt(kind), text), { greedy: mode === 'greedy' });
      records.push({ group, mode, tokens: res.tokens, ms: res.ms, attempts: res.attempts });
      return { reply: res.text, answer: extractAnswer(res.text, kind) };
    } catch (e) {
      const err = e instanceof LlmCallError ? e : new LlmCallError('unreachable', String(e), 1, 0, 0);
      records.push({
        group,
        mode,
        tokens: { input: err.inputTokens, output: 0, estimated: true },
        ms: err.ms,
        attempts: err.attempts,
        error: err.kind,
      });
      return { reply: '', answer: '' };
    }
  }

  function reportFailures(before: number, what: string): void {
    const failed = records.slice(before).filter((r) => r.error).length;
    if (failed > 0)
      log(`${client.label}: ${failed} of ${records.length - before} ${what} calls failed; their answers score 0`);
  }

  return {
    backend: client.label,
    async sample(prompts, groupSize) {
      const before = records.length;
      const out = await Promise.all(
        prompts.map((p, g) => Promise.all(Array.from({ length: groupSize }, () => ask(p.text, p.kind, g, 'sample')))),
      );
      reportFailures(before, 'sampling');
      return {
        answers: out.map((group) => group.map((r) => r.answer)),
        replies: out.map((group) => group.map((r) => r.reply)),
      };
    },
    async greedy(prompts) {
      const before = records.length;
      const out = await Promise.all(prompts.map((p, g) => ask(p.text, p.kind, g, 'greedy')));
      reportFailures(before, 'greedy');
      return out.map((r) => r.answer);
    },
    async update(): Promise<TrainStats> {
      return { loss: 0, meanAbsAdvantage: 0, clipFraction: 0, kl: 0, entropy: 0, tokens: 0, groups: 0, lr: 0 };
    },
    async save(dir: string) {
      mkdirSync(dir, { recursive: true });
      // The model's name only: no base URL (it may carry credentials), no key.
      writeFileSync(
        join(dir, POLICY_FILE),
        JSON.stringify({ backend: client.label, provider: cfg.provider, model: cfg.model }, null, 2),
      );
    },
    async load(dir: string) {
      const path = join(dir, POLICY_FILE);
      if (!existsSync(path)) return;
      const saved = JSON.parse(readFileSync(path, 'utf8')) as { model?: string };
      if (saved.model && saved.model !== cfg.model)
        log(`${client.label}: checkpoint was taken with model ${saved.model}; evaluating ${cfg.model} now`);
    },
    dispose() {},
    takeCalls() {
      const out = records;
      records = [];
      return out;
    },
    usage: () => client.usage(),
  };
}
