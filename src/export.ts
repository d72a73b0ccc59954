// `cogen export`: the run's validated tasks with their verifiers, in formats training stacks read.
//   jsonl   one task per line (the full record below)
//   trl     chat-format prompts for TRL's GRPOTrainer: {prompt: [{role, content}], ...verifier columns}
//   parquet veRL's RL dataset layout: data_source, prompt (chat), ability, reward_model {style, ground_truth}, extra_info
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { referenceAnswer, type Example, type Json, type Task } from './task.js';
import type { TaskRow } from './store.js';

export const EXPORT_FORMATS = ['jsonl', 'trl', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

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
}

export function toRecord(row: TaskRow): ExportRecord {
  const t = row.task;
  const io =
    t.type === 'induction'
      ? { visible: t.visible, hidden: t.hidden, message: t.message }
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
  };
}

/** Writes the export and returns the number of records. */
export async function exportTasks(rows: TaskRow[], out: string, format: ExportFormat): Promise<number> {
  mkdirSync(dirname(out), { recursive: true });
  const records = rows.map(toRecord);
  const taskJson = (i: number) => JSON.stringify(rows[i]!.task);
  if (format === 'jsonl') {
    writeFileSync(out, records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : ''));
  } else if (format === 'trl') {
    const lines = records.map((r, i) =>
      JSON.stringify({
        prompt: [{ role: 'user', content: r.prompt }],
        task_id: r.id,
        task_type: r.type,
        // Everything a reward function needs to verify a completion with cogen's verifyAnswer.
        task: taskJson(i),
        ground_truth: r.answer,
        skills: r.skills,
        level: r.level,
      }),
    );
    writeFileSync(out, lines.join('\n') + (lines.length ? '\n' : ''));
  } else {
    const { parquetWriteBuffer } = await import('hyparquet-writer');
    const buf = parquetWriteBuffer({
      columnData: [
        { name: 'data_source', data: records.map((r) => `cogen/${r.family}`), type: 'STRING' },
        // JSON-typed columns take the values themselves (the writer serialises them once).
        { name: 'prompt', data: records.map((r) => [{ role: 'user', content: r.prompt }]), type: 'JSON' },
        { name: 'ability', data: records.map((r) => r.type), type: 'STRING' },
        { name: 'reward_model', data: records.map((r) => ({ style: 'rule', ground_truth: r.answer })), type: 'JSON' },
        { name: 'extra_info', data: records.map((r, i) => ({ id: r.id, level: r.level, skills: r.skills, solve_rate: r.solveRate, task: rows[i]!.task })), type: 'JSON' },
      ],
    });
    writeFileSync(out, Buffer.from(buf));
  }
  return records.length;
}
