// `cogen export` without a run: hand-made task rows of every type through every format. The jsonl and
// trl lines keep their key order (what earlier exports wrote); the parquet file is read back with
// hyparquet and must hold veRL's nested layout (a chat prompt as a list of structs, structs for
// reward_model and extra_info), with the stored task as JSON text in extra_info.task.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetMetadata, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { EXPORT_FORMATS, exportRun, exportTasks, parquetSchema, toRecord } from '../src/export.js';
import type { RunStore, TaskRow } from '../src/run/testing.js';
import type { Task } from '../core/task.js';
import { tempDir } from './helpers.js';

const base = {
  family: 'arith',
  level: 1,
  skills: ['arith.add', 'arith.mul'],
  hash: 'h',
  parent: null,
  proposer: 'generator',
};
const tasks: Task[] = [
  { ...base, id: 'd1', type: 'deduction', program: 'function f(a, b) { return a + b; }', input: [2, 3], output: 5 },
  {
    ...base,
    id: 'a1',
    type: 'abduction',
    program: 'function f(s) { return s + "!"; }',
    input: ['hi'],
    output: 'hi!',
    parent: { id: 'd1', op: 'mutate' },
    proposer: 'mutation',
  },
  {
    ...base,
    id: 'i1',
    type: 'induction',
    family: 'array',
    skills: ['array.map'],
    program: 'function f(xs) { return xs.map((x) => x * 2); }',
    visible: [{ input: [[1, 2]], output: [2, 4] }],
    hidden: [{ input: [[3]], output: [6] }],
    message: 'doubles — “quoted” unicode',
  },
];
const rows: TaskRow[] = tasks.map((task, i) => ({
  task,
  step: i + 1,
  compact: `c${i}`,
  natural: `Solve ${task.id} ✓`,
  attempts: i === 2 ? 0 : 8,
  solved: i === 2 ? 0 : 3,
}));

const RECORD_KEYS = [
  'id',
  'type',
  'family',
  'level',
  'skills',
  'program',
  'input',
  'output',
  'prompt',
  'answer',
  'solveRate',
  'attempts',
  'parent',
  'proposer',
  'hash',
];
const TRL_KEYS = ['prompt', 'task_id', 'task_type', 'task', 'ground_truth', 'skills', 'level'];

const readLines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('cogen export: tasks', () => {
  it('jsonl: one full record per line, in the key order exports have always had', async () => {
    const out = join(tempDir('cogen-export-'), 'nested', 'tasks.jsonl');
    expect(await exportTasks(rows, out, 'jsonl')).toBe(3);
    const text = readFileSync(out, 'utf8');
    expect(text).toBe(rows.map((r) => JSON.stringify(toRecord(r)) + '\n').join(''));
    const [d, , i] = readLines(out);
    expect(Object.keys(d)).toEqual(RECORD_KEYS);
    expect(Object.keys(i)).toEqual([
      ...RECORD_KEYS.slice(0, 6),
      'visible',
      'hidden',
      'message',
      ...RECORD_KEYS.slice(8),
    ]);
    expect(d.answer).toBe('5');
    expect(i.solveRate).toBeNull();
  });

  it('trl: a chat prompt and the verifier columns, the task as JSON text', async () => {
    const out = join(tempDir('cogen-export-'), 'tasks.trl.jsonl');
    await exportTasks(rows, out, 'trl');
    const lines = readLines(out);
    expect(lines.map((l) => Object.keys(l))).toEqual(lines.map(() => TRL_KEYS));
    expect(lines[1]).toMatchObject({
      prompt: [{ role: 'user', content: 'Solve a1 ✓' }],
      task_id: 'a1',
      task_type: 'abduction',
      ground_truth: '["hi"]',
    });
    expect(JSON.parse(lines[2].task)).toEqual(tasks[2]);
  });

  it("parquet: veRL's layout with nested columns, read back by hyparquet", async () => {
    const out = join(tempDir('cogen-export-'), 'tasks.parquet');
    await exportTasks(rows, out, 'parquet');
    const file = await asyncBufferFromFile(out);
    const meta = parquetMetadata(await file.slice(0));
    expect(meta.schema[0]!.num_children).toBe(5);
    expect(meta.schema.find((e) => e.name === 'prompt')?.converted_type).toBe('LIST');
    expect(meta.schema.find((e) => e.name === 'reward_model')?.num_children).toBe(2);
    // No JSON-typed columns: every nested value is a real list or struct.
    expect(meta.schema.some((e) => e.converted_type === 'JSON')).toBe(false);

    const read = (await parquetReadObjects({ file })) as Record<string, any>[];
    expect(read).toHaveLength(3);
    expect(read.map((r) => Object.keys(r))).toEqual(
      read.map(() => ['data_source', 'prompt', 'ability', 'reward_model', 'extra_info']),
    );
    read.forEach((r, k) => {
      const row = rows[k]!;
      expect(r.data_source).toBe(`cogen/${row.task.family}`);
      expect(r.prompt).toEqual([{ role: 'user', content: row.natural }]);
      expect(r.ability).toBe(row.task.type);
      expect(r.reward_model).toEqual({ style: 'rule', ground_truth: toRecord(row).answer });
      expect(r.extra_info).toMatchObject({
        index: BigInt(k),
        id: row.task.id,
        type: row.task.type,
        family: row.task.family,
        level: row.task.level,
        skills: row.task.skills,
        attempts: BigInt(row.attempts),
      });
      // The task exactly as stored in the run: what a compute_score sends to /v1/verify.
      expect(r.extra_info.task).toBe(JSON.stringify(row.task));
    });
    expect(read[0]!.extra_info.solve_rate).toBeCloseTo(3 / 8);
    expect(read[2]!.extra_info.solve_rate).toBeNull();
    expect(read[2]!.reward_model.ground_truth).toBe(tasks[2]!.program);
  });

  it('an empty run writes empty files that still read back', async () => {
    const dir = tempDir('cogen-export-');
    for (const format of EXPORT_FORMATS) expect(await exportTasks([], join(dir, `empty.${format}`), format)).toBe(0);
    expect(readFileSync(join(dir, 'empty.jsonl'), 'utf8')).toBe('');
    expect(readFileSync(join(dir, 'empty.trl'), 'utf8')).toBe('');
    const read = await parquetReadObjects({ file: await asyncBufferFromFile(join(dir, 'empty.parquet')) });
    expect(read).toEqual([]);
  });

  it('--what tasks reads the run store through the kind, the same bytes as exportTasks', async () => {
    const dir = tempDir('cogen-export-');
    const store = { tasks: () => rows } as unknown as RunStore;
    for (const format of EXPORT_FORMATS) {
      expect(await exportRun(store, 'tasks', join(dir, `run.${format}`), format)).toBe(3);
      await exportTasks(rows, join(dir, `direct.${format}`), format);
      expect(readFileSync(join(dir, `run.${format}`)).equals(readFileSync(join(dir, `direct.${format}`)))).toBe(true);
    }
  });
});

describe('parquet schema', () => {
  it('lists take the three-level layout, structs their fields in order, everything nullable', () => {
    expect(parquetSchema('prompt', { list: { struct: { role: 'string', content: 'string' } } })).toEqual([
      {
        name: 'prompt',
        repetition_type: 'OPTIONAL',
        converted_type: 'LIST',
        logical_type: { type: 'LIST' },
        num_children: 1,
      },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
      {
        name: 'role',
        repetition_type: 'OPTIONAL',
        type: 'BYTE_ARRAY',
        converted_type: 'UTF8',
        logical_type: { type: 'STRING' },
      },
      {
        name: 'content',
        repetition_type: 'OPTIONAL',
        type: 'BYTE_ARRAY',
        converted_type: 'UTF8',
        logical_type: { type: 'STRING' },
      },
    ]);
  });
});
