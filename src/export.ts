// `cogen export`: what a run made, in formats training stacks read. Two small tables meet here:
//   kinds of record (--what): an adapter from a run's rows to records, each record in the shapes the
//     formats need. tasks: the validated tasks with their verifiers; trajectories: the played
//     environment episodes as multi-turn chats with tool calls (OpenAI messages format).
//   formats (--format): a writer from records to a file, the same for every kind.
//     jsonl   one record per line (the kind's full record)
//     trl     chat-format prompts for TRL's GRPOTrainer: {prompt: [{role, content}], ...verifier columns}
//     parquet veRL's RL dataset layout, as veRL's example scripts write it: data_source, prompt (a list
//             of {role, content} structs), ability, reward_model {style, ground_truth} and extra_info
//             (structs). hyparquet-writer writes the nested columns from an explicit schema.
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { referenceAnswer, type Example, type Json, type Task } from '../core/task.js';
import type { EnvEpisodeRow, RunStore, TaskRow } from './run/index.js';
import { trajectoryMessages, type EnvMessage, type ToolSchema } from '../envs/index.js';
import { proposalKind } from './export-proposals.js';

export const EXPORT_FORMATS = ['jsonl', 'trl', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_KINDS = ['tasks', 'trajectories', 'proposals'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

export interface ChatMessage {
  role: string;
  content: string;
}

/** One row of veRL's RL dataset. */
export interface VerlRow {
  data_source: string;
  prompt: ChatMessage[];
  ability: string;
  reward_model: { style: string; ground_truth: string };
  extra_info: Record<string, unknown>;
}

/** One exported record in the shape each format writes. */
export interface Exported {
  /** jsonl: the kind's full record. */
  record: object;
  /** trl: a chat-format prompt (the text of the solver's view: src/export-view.ts) and the columns a reward function needs. */
  trl: { prompt: ChatMessage[] | string } & Record<string, unknown>;
  /** parquet: veRL's row; extra_info holds the fields the kind declares in `extraInfo`. */
  verl: VerlRow;
}

/**
 * A parquet column type: a leaf, a list of a type, or a struct of named fields (in order). Every
 * field is nullable (OPTIONAL), as pyarrow writes them; lists use the standard three-level layout.
 */
export type ParquetType =
  'string' | 'int32' | 'int64' | 'double' | 'bool' | { list: ParquetType } | { struct: ParquetFields };
export type ParquetFields = Record<string, ParquetType>;

/** A kind of record: where its rows come from in a run, how one becomes a record, and the typed fields of veRL's extra_info. */
export interface RecordKind<Row> {
  rows(store: RunStore): Row[];
  toExported(row: Row, index: number): Exported;
  extraInfo: ParquetFields;
}

// ---- kind: tasks ------------------------------------------------------------------------------

export interface ExportRecord {
  id: string;
  type: Task['type'];
  family: string;
  level: number;
  skills: string[];
  program: string;
  /** deduction/abduction: the argument list; induction: absent (see visible/hidden). */
  input?: Json[];
  output?: Json;
  visible?: Example[];
  hidden?: Example[];
  message?: string;
  prompt: string;
  answer: string;
  solveRate: number | null;
  attempts: number;
  parent: { id: string; op: string } | null;
  proposer: string;
  hash: string;
  /** Interpreter steps an answer's verification may spend (absent on tasks made before budgets). */
  budget?: number;
}

export function toRecord(row: TaskRow): ExportRecord {
  const t = row.task;
  const io =
    t.type === 'induction'
      ? { visible: t.visible, hidden: t.hidden, message: t.message }
      : t.type === 'problem'
        ? { statement: t.statement, data: t.data, witness: t.witness, failures: t.failures, verifier: t.verifier }
        : { input: t.input, output: t.output };
  return {
    id: t.id,
    type: t.type,
    family: t.family,
    level: t.level,
    skills: t.skills,
    program: t.program,
    ...io,
    prompt: row.natural,
    answer: referenceAnswer(t),
    solveRate: row.attempts > 0 ? row.solved / row.attempts : null,
    attempts: row.attempts,
    parent: t.parent,
    proposer: t.proposer,
    hash: t.hash,
    ...(t.budget === undefined ? {} : { budget: t.budget }),
  };
}

const taskKind: RecordKind<TaskRow> = {
  rows: (store) => store.tasks(),
  extraInfo: {
    index: 'int64',
    id: 'string',
    type: 'string',
    family: 'string',
    level: 'int32',
    skills: { list: 'string' },
    solve_rate: 'double',
    attempts: 'int64',
    // The task object as stored in the run, as JSON text (its shape varies by type): what a veRL
    // compute_score sends to cogen's stateless /v1/verify with the answer.
    task: 'string',
  },
  toExported(row, index) {
    const r = toRecord(row);
    // Everything a reward function needs to verify a completion with cogen's verifyAnswer.
    const task = JSON.stringify(row.task);
    const prompt = [{ role: 'user', content: r.prompt }];
    return {
      record: r,
      trl: { prompt, task_id: r.id, task_type: r.type, task, ground_truth: r.answer, skills: r.skills, level: r.level },
      verl: {
        data_source: `cogen/${r.family}`,
        prompt,
        ability: r.type,
        reward_model: { style: 'rule', ground_truth: r.answer },
        extra_info: {
          index,
          id: r.id,
          type: r.type,
          family: r.family,
          level: r.level,
          skills: r.skills,
          solve_rate: r.solveRate,
          attempts: r.attempts,
          task,
        },
      },
    };
  },
};

// ---- kind: trajectories -----------------------------------------------------------------------

/** One played environment episode as a chat: what SFT or RL elsewhere trains on. */
export interface TrajectoryRecord {
  id: number;
  env_id: string;
  kind: string;
  family: string;
  level: number;
  skills: string[];
  seed: number;
  step: number;
  /** The final verified reward in [0, 1], and why it is not 1. */
  reward: number;
  reason: string | null;
  done: boolean;
  turns: number;
  tools: ToolSchema[];
  /** system, user, then per action an assistant message with one tool call and the tool's answer. */
  messages: EnvMessage[];
}

export function toTrajectoryRecord(row: EnvEpisodeRow): TrajectoryRecord {
  const t = row.trajectory;
  return {
    id: row.id,
    env_id: t.envId,
    kind: t.kind,
    family: t.family,
    level: t.level,
    skills: row.spec.skills,
    seed: t.seed,
    step: row.step,
    reward: t.reward,
    reason: t.reason ?? null,
    done: t.done,
    turns: t.steps.length,
    tools: t.tools,
    messages: trajectoryMessages(t),
  };
}

const trajectoryKind: RecordKind<EnvEpisodeRow> = {
  rows: (store) => store.envEpisodes(),
  extraInfo: {
    index: 'int64',
    id: 'int64',
    env_id: 'string',
    kind: 'string',
    family: 'string',
    level: 'int32',
    skills: { list: 'string' },
    reward: 'double',
    // JSON text: the whole chat (tool calls nest too deeply for one struct), the tools and the spec.
    messages: 'string',
    tools: 'string',
    spec: 'string',
  },
  toExported(row, index) {
    const r = toTrajectoryRecord(row);
    const [system, user, ...rest] = r.messages;
    const prompt = [system, user] as ChatMessage[];
    return {
      record: r,
      // TRL's conversational prompt-completion layout, with the tools column its chat templates read.
      trl: {
        prompt,
        completion: rest,
        tools: r.tools,
        reward: r.reward,
        env_id: r.env_id,
        kind: r.kind,
        level: r.level,
      },
      verl: {
        data_source: `cogen/env/${r.kind}`,
        prompt,
        ability: `env.${r.kind}`,
        reward_model: { style: 'rule', ground_truth: row.spec.program },
        extra_info: {
          index,
          id: r.id,
          env_id: r.env_id,
          kind: r.kind,
          family: r.family,
          level: r.level,
          skills: r.skills,
          reward: r.reward,
          messages: JSON.stringify(r.messages),
          tools: JSON.stringify(r.tools),
          spec: JSON.stringify(row.spec),
        },
      },
    };
  },
};

export const RECORD_KINDS: { [K in ExportKind]: RecordKind<any> } = {
  tasks: taskKind,
  trajectories: trajectoryKind,
  proposals: proposalKind,
};

// ---- formats ----------------------------------------------------------------------------------

type FormatWriter = (records: Exported[], extraInfo: ParquetFields) => Promise<Uint8Array | string>;

const lines = (values: object[]) => values.map((v) => JSON.stringify(v)).join('\n') + (values.length ? '\n' : '');

/** veRL's columns, in the order its example scripts write them. */
const verlColumns = (extraInfo: ParquetFields): ParquetFields => ({
  data_source: 'string',
  prompt: { list: { struct: { role: 'string', content: 'string' } } },
  ability: 'string',
  reward_model: { struct: { style: 'string', ground_truth: 'string' } },
  extra_info: { struct: extraInfo },
});

const WRITERS: Record<ExportFormat, FormatWriter> = {
  jsonl: async (records) => lines(records.map((r) => r.record)),
  trl: async (records) => lines(records.map((r) => r.trl)),
  parquet: async (records, extraInfo) => {
    const { parquetWriteBuffer } = await import('hyparquet-writer');
    const columns = Object.entries(verlColumns(extraInfo));
    const buf = parquetWriteBuffer({
      columnData: columns.map(([name, type]) => ({
        name,
        data: records.map((r) => toParquetValue(type, r.verl[name as keyof VerlRow])),
      })),
      schema: [
        { name: 'root', num_children: columns.length },
        ...columns.flatMap(([name, type]) => parquetSchema(name, type)),
      ],
    });
    return new Uint8Array(buf);
  },
};

type SchemaElement = NonNullable<Parameters<typeof import('hyparquet-writer').parquetWriteBuffer>[0]['schema']>[number];

const LEAVES: Record<Extract<ParquetType, string>, Omit<SchemaElement, 'name'>> = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
  int32: { type: 'INT32' },
  int64: { type: 'INT64' },
  double: { type: 'DOUBLE' },
  bool: { type: 'BOOLEAN' },
};

/** The flattened (depth-first) parquet schema elements of one field. */
export function parquetSchema(name: string, type: ParquetType): SchemaElement[] {
  if (typeof type === 'string') return [{ name, repetition_type: 'OPTIONAL', ...LEAVES[type] }];
  if ('list' in type) {
    return [
      { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      ...parquetSchema('element', type.list),
    ];
  }
  const fields = Object.entries(type.struct);
  return [
    { name, repetition_type: 'OPTIONAL', num_children: fields.length },
    ...fields.flatMap(([n, t]) => parquetSchema(n, t)),
  ];
}

/** A value shaped for the writer: int64 leaves as bigint, struct fields by name (missing → null). */
function toParquetValue(type: ParquetType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (type === 'int64') return BigInt(value as number);
  if (typeof type === 'string') return value;
  if ('list' in type) return (value as unknown[]).map((v) => toParquetValue(type.list, v));
  const obj = value as Record<string, unknown>;
  return Object.fromEntries(Object.entries(type.struct).map(([n, t]) => [n, toParquetValue(t, obj[n])]));
}

// ---- entry points -----------------------------------------------------------------------------

/** Writes records of one kind in one format; returns how many. */
export async function writeExport<Row>(
  kind: RecordKind<Row>,
  rows: Row[],
  out: string,
  format: ExportFormat,
): Promise<number> {
  const records = rows.map((row, i) => kind.toExported(row, i));
  const data = await WRITERS[format](records, kind.extraInfo);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, data);
  return records.length;
}

/** `cogen export --what <kind>`: the run's records of that kind. */
export function exportRun(store: RunStore, what: ExportKind, out: string, format: ExportFormat): Promise<number> {
  const kind = RECORD_KINDS[what];
  return writeExport(kind, kind.rows(store), out, format);
}

/** Writes the export of tasks and returns the number of records. */
export function exportTasks(rows: TaskRow[], out: string, format: ExportFormat): Promise<number> {
  return writeExport(taskKind, rows, out, format);
}
