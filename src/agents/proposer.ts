// The LLM proposer (docs/DESIGN.md, "One step of the loop", step 2): a chat model writes a task
// draft from K reference tasks, the way Absolute Zero's proposer does. Its output is parsed here
// against a zod schema (LangChain's fakes and withStructuredOutput validate nothing); the loop then
// validates the draft in the sandbox through generators' `materialise`, exactly like a generated
// draft.
import { z } from 'zod';
import type { AnyDraft, Input, Json } from '../../core/task.js';
import { createRng } from '../../core/rng.js';
import { learnability, solveRate } from '../../core/rules.js';
import type { ProposerConfig } from './config.js';
import {
  chatMessages,
  createChatClient,
  estimateTokens,
  LlmCallError,
  redactSecrets,
  type ChatClient,
  type ChatUsage,
  type ClientDeps,
  type TokenCount,
} from './model.js';
import { PROPOSAL_LIMITS, pickReferences, proposerPrompt, promptText, type ProposalRequest } from './prompts.js';

export type { ProposalRequest } from './prompts.js';

/** Why a proposal never became a draft. Sandbox rejections (syntax, timeout, duplicate, …) come later, from materialise. */
export const REJECTION_REASONS = ['unreachable', 'timeout', 'unparsable', 'schema'] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface ProposalOutcome {
  /** The draft to materialise, or null when rejected here. */
  draft: AnyDraft | null;
  rejection?: RejectionReason;
  /** Human-readable reason (first schema issue, parse error, call error), secrets redacted. */
  detail?: string;
  /** The full prompt sent (system and user parts). */
  prompt: string;
  /** The model's raw answer ('' when the call failed), secrets redacted. */
  raw: string;
  tokens: TokenCount;
  ms: number;
}

export interface ProposerAgent {
  /** `llm:<model>`: the draft's `proposer`. */
  readonly label: string;
  /** Fraction of fresh tasks to propose with the LLM. */
  readonly share: number;
  propose(req: ProposalRequest): Promise<ProposalOutcome>;
  /** Outcomes so far by rejection reason, plus 'ok' for drafts handed on. */
  counts(): Record<RejectionReason | 'ok', number>;
  /** Calls and tokens so far. */
  usage(): ChatUsage;
}

export interface ProposerDeps extends Omit<ClientDeps, 'role'> {
  log: (line: string) => void;
}

// ---------------------------------------------------------------------------------------------
// Extraction: a fenced ```json block (or an untagged one), else the first balanced bare object.

/** Escapes raw newlines/tabs inside JSON strings (models often write programs over several lines). */
function escapeControlCharsInStrings(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') {
        out += ch + (text[i + 1] ?? '');
        i++;
        continue;
      }
      if (ch === '"') inString = false;
      if (ch === '\n') out += '\\n';
      else if (ch === '\r') out += '\\r';
      else if (ch === '\t') out += '\\t';
      else out += ch;
    } else {
      if (ch === '"') inString = true;
      out += ch;
    }
  }
  return out;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    try {
      return { ok: true, value: JSON.parse(escapeControlCharsInStrings(text)) };
    } catch {
      return { ok: false, error: (e as Error).message };
    }
  }
}

/** The first balanced `{…}` in the text, respecting strings; null if none closes. */
function firstBareObject(text: string, from = 0): string | null {
  const start = text.indexOf('{', from);
  if (start < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}

const FENCE = /```([A-Za-z0-9_-]*)[^\S\n]*\n([\s\S]*?)```/g;

/**
 * The JSON object in a model's answer: json-tagged fenced blocks first, then untagged ones, then the
 * first balanced bare object. Returns the parsed value or why nothing parsed.
 */
export function extractJson(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const blocks = [...raw.matchAll(FENCE)].map((m) => ({ lang: m[1]!.toLowerCase(), body: m[2]!.trim() }));
  const candidates = [
    ...blocks.filter((b) => b.lang === 'json' || b.lang === 'json5' || b.lang === 'jsonc').map((b) => b.body),
    ...blocks.filter((b) => b.lang === '').map((b) => b.body),
  ];
  const bare = firstBareObject(raw);
  if (bare) candidates.push(bare);
  let firstError = '';
  for (const c of candidates) {
    const res = tryParse(c);
    if (res.ok && res.value !== null && typeof res.value === 'object' && !Array.isArray(res.value)) return res;
    if (!res.ok && !firstError) firstError = res.error;
  }
  if (candidates.length === 0) return { ok: false, error: 'no ```json block and no JSON object in the answer' };
  return { ok: false, error: firstError ? `invalid JSON: ${firstError}` : 'the JSON is not an object' };
}

// ---------------------------------------------------------------------------------------------
// The schema a proposal must satisfy.

const programSchema = z
  .string()
  .trim()
  .min(1, 'program is empty')
  .max(PROPOSAL_LIMITS.programChars, `program longer than ${PROPOSAL_LIMITS.programChars} characters`)
  .refine((s) => /\bfunction\s+f\s*\(/.test(s), 'program must declare `function f(...)`');

const jsonValue: z.ZodType<Json> = z.json();

const inputSchema = z
  .array(jsonValue, 'an input is a JSON array of arguments, e.g. [5] for f(5)')
  .max(PROPOSAL_LIMITS.maxArgs, `at most ${PROPOSAL_LIMITS.maxArgs} arguments`)
  .refine(
    (a) => JSON.stringify(a).length <= PROPOSAL_LIMITS.inputChars,
    `an input is at most ${PROPOSAL_LIMITS.inputChars} JSON characters`,
  );

export const singleProposalSchema = z.object({ program: programSchema, input: inputSchema });

export const inductionProposalSchema = z.object({
  program: programSchema,
  inputs: z
    .array(inputSchema)
    .min(PROPOSAL_LIMITS.inductionMinInputs, `at least ${PROPOSAL_LIMITS.inductionMinInputs} inputs`)
    .max(PROPOSAL_LIMITS.inductionMaxInputs, `at most ${PROPOSAL_LIMITS.inductionMaxInputs} inputs`),
  message: z
    .string()
    .trim()
    .min(1, 'message is empty')
    .max(PROPOSAL_LIMITS.messageChars, `message longer than ${PROPOSAL_LIMITS.messageChars} characters`),
});

const limitedJson = (what: string) =>
  jsonValue.refine(
    (v) => JSON.stringify(v).length <= PROPOSAL_LIMITS.inputChars,
    `${what} is at most ${PROPOSAL_LIMITS.inputChars} JSON characters`,
  );

/** A verified problem: the sandbox later checks that the witness scores 1 and every failure < 1. */
export const problemProposalSchema = z.object({
  statement: z
    .string()
    .trim()
    .min(1, 'statement is empty')
    .max(PROPOSAL_LIMITS.statementChars, `statement longer than ${PROPOSAL_LIMITS.statementChars} characters`),
  data: limitedJson('data'),
  program: programSchema,
  witness: limitedJson('the witness'),
  failures: z
    .array(limitedJson('a failure'))
    .min(
      PROPOSAL_LIMITS.problemMinFailures,
      `at least ${PROPOSAL_LIMITS.problemMinFailures} failures (near-miss answers the verifier must reject)`,
    )
    .max(PROPOSAL_LIMITS.problemFailures, `at most ${PROPOSAL_LIMITS.problemFailures} failures`),
});

/** Parses an answer into a draft, or says why not. Pure: no model, no sandbox. */
export function parseProposal(
  raw: string,
  req: Pick<ProposalRequest, 'family' | 'level' | 'type' | 'skills'>,
  proposer: string,
): { draft: AnyDraft } | { rejection: 'unparsable' | 'schema'; detail: string } {
  const extracted = extractJson(raw);
  if (!extracted.ok) return { rejection: 'unparsable', detail: extracted.error };
  const base = {
    type: req.type,
    family: req.family,
    level: req.level,
    skills: req.skills.map((s) => s.id),
    parent: null,
    proposer,
  };
  if (req.type === 'problem') {
    const p = problemProposalSchema.safeParse(extracted.value);
    if (!p.success) return { rejection: 'schema', detail: describeIssues(p.error) };
    const { statement, data, program, witness, failures } = p.data;
    return { draft: { ...base, type: 'problem', statement, data, program, witness, failures } };
  }
  if (req.type === 'induction') {
    const p = inductionProposalSchema.safeParse(extracted.value);
    if (!p.success) return { rejection: 'schema', detail: describeIssues(p.error) };
    const inputs = p.data.inputs as Input[];
    return {
      draft: {
        ...base,
        program: p.data.program,
        inputs,
        visibleCount: Math.ceil(inputs.length / 2),
        message: p.data.message,
      },
    };
  }
  const p = singleProposalSchema.safeParse(extracted.value);
  if (!p.success) return { rejection: 'schema', detail: describeIssues(p.error) };
  return { draft: { ...base, program: p.data.program, inputs: [p.data.input as Input] } };
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

// ---------------------------------------------------------------------------------------------
// The agent.

const BREAKER_AFTER = 3;
const BREAKER_MAX_SKIP = 64;

/** The proposer agent, or null when the share is 0 (the generators propose everything). */
export function createProposerAgent(cfg: ProposerConfig, deps: ProposerDeps): ProposerAgent | null {
  if (cfg.share <= 0) return null;
  const log = (line: string) => deps.log(redactSecrets(line, deps.env));
  const client: ChatClient = createChatClient(cfg, { ...deps, role: 'proposer' });
  const counts: Record<RejectionReason | 'ok', number> = {
    ok: 0,
    unreachable: 0,
    timeout: 0,
    unparsable: 0,
    schema: 0,
  };

  // Circuit breaker: after BREAKER_AFTER failed calls in a row (each after its retries), the next
  // `skip` requests are answered at once as 'unreachable' so a dead endpoint does not stall the run;
  // `skip` doubles at every new opening (up to BREAKER_MAX_SKIP) and resets on the first success.
  let failuresInRow = 0;
  let skip = 0;
  let skipLeft = 0;

  async function propose(req: ProposalRequest): Promise<ProposalOutcome> {
    const rng = createRng(`proposer/${req.seed}`);
    // A variant's parent is always the first reference; the others are picked as usual.
    const parent = req.variant?.parent;
    const others = parent ? req.references.filter((t) => t.id !== parent.id) : req.references;
    const picked = pickReferences(others, req, parent ? cfg.k - 1 : cfg.k, rng);
    const references = parent ? [parent, ...picked] : picked;
    const p = proposerPrompt(req, references);
    const prompt = promptText(p);
    if (skipLeft > 0) {
      skipLeft--;
      counts.unreachable++;
      const detail = `not called: ${failuresInRow} failed calls in a row; the generators propose instead (${skipLeft} more skipped)`;
      return {
        draft: null,
        rejection: 'unreachable',
        detail,
        prompt,
        raw: '',
        tokens: { input: 0, output: 0, estimated: true },
        ms: 0,
      };
    }
    let call;
    try {
      call = await client.call(chatMessages(p.system, p.user));
      failuresInRow = 0;
      skip = 0;
    } catch (e) {
      const err =
        e instanceof LlmCallError
          ? e
          : new LlmCallError('unreachable', redactSecrets(String(e), deps.env), 1, 0, estimateTokens(prompt));
      counts[err.kind]++;
      if (++failuresInRow >= BREAKER_AFTER) {
        skip = Math.min(BREAKER_MAX_SKIP, skip ? skip * 2 : BREAKER_AFTER);
        skipLeft = skip;
        log(
          `${client.label}: ${failuresInRow} proposals in a row failed (${err.kind}); the built-in generators propose the next ${skip} tasks, then the model is tried again`,
        );
      }
      return {
        draft: null,
        rejection: err.kind,
        detail: err.message,
        prompt,
        raw: '',
        tokens: { input: err.inputTokens, output: 0, estimated: true },
        ms: err.ms,
      };
    }
    const parsed = parseProposal(call.text, req, client.label);
    const common = { prompt, raw: call.text, tokens: call.tokens, ms: call.ms };
    if ('rejection' in parsed) {
      counts[parsed.rejection]++;
      log(
        `${client.label}: proposal for ${req.family}/${req.level}/${req.type} rejected (${parsed.rejection}: ${parsed.detail})`,
      );
      return { draft: null, rejection: parsed.rejection, detail: parsed.detail, ...common };
    }
    counts.ok++;
    return { draft: parsed.draft, ...common };
  }

  return { label: client.label, share: cfg.share, propose, counts: () => ({ ...counts }), usage: () => client.usage() };
}

// ---------------------------------------------------------------------------------------------
// What the loop records per proposal (one row of a `proposals` table).

export interface ProposalRecord {
  step: number;
  family: string;
  level: number;
  type: ProposalRequest['type'];
  /** `llm:<model>`. */
  proposer: string;
  prompt: string;
  raw: string;
  /** 'accepted', a RejectionReason of this module, or a rejection reason of materialise. */
  outcome: string;
  detail: string | null;
  /** The materialised task's id when accepted. */
  taskId: string | null;
  inputTokens: number;
  outputTokens: number;
  tokensEstimated: boolean;
  ms: number;
  /** 1 − p for a solve rate 0 < p < 1, else 0; null until the solver has tried the task. */
  learnability: number | null;
}

/**
 * A record from an outcome and what materialise said about its draft (when there was one). The
 * loop fills `learnability` once the task's G answers are scored (learnabilityReward).
 */
export function toProposalRecord(
  step: number,
  req: Pick<ProposalRequest, 'family' | 'level' | 'type'>,
  proposer: string,
  out: ProposalOutcome,
  materialised?: { ok: true; task: { id: string } } | { ok: false; reason: string; detail: string },
): ProposalRecord {
  const accepted = materialised?.ok === true;
  return {
    step,
    family: req.family,
    level: req.level,
    type: req.type,
    proposer,
    prompt: out.prompt,
    raw: out.raw,
    outcome: out.rejection ?? (materialised ? (materialised.ok ? 'accepted' : materialised.reason) : 'accepted'),
    detail: out.detail ?? (materialised && !materialised.ok ? materialised.detail : null),
    taskId: accepted ? materialised.task.id : null,
    inputTokens: out.tokens.input,
    outputTokens: out.tokens.output,
    tokensEstimated: out.tokens.estimated,
    ms: out.ms,
    learnability: null,
  };
}

/** The proposer's reward for a task, as Absolute Zero defines it: the learnability of its group's solve rate. */
export const learnabilityReward = (rewards: readonly number[]): number => learnability(solveRate(rewards));
