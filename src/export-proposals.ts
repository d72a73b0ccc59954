// `cogen export --what proposals` (docs/proposers.md): what the proposers wrote, as a
// dataset to train a proposer elsewhere. One record per proposal, accepted or not: the prompt (an
// LLM proposer's prompt; for the learned grammar proposer the arm and its choice trace; for
// self-play the arm, the model's prompt and its choice tokens), the output (the program as
// written), the outcome and the learnability reward (1 − p for the solver's solve rate 0 < p < 1,
// else 0; null until the task was scored, and for refused proposals). In the trl format a record is
// TRL's conversational prompt-completion pair with `reward` and a boolean `label` (reward > 0), the
// unpaired layout its KTO trainer reads and a GRPO reward function can look up. (This file keeps
// export.ts's RecordKind shape without importing it: export.ts imports this one.)
import type { RunStore } from './run/index.js';

export interface ProposalExport {
  id: number;
  step: number;
  proposer: string;
  family: string;
  level: number;
  type: string;
  prompt: string;
  output: string;
  outcome: string;
  detail: string | null;
  task_id: string | null;
  learnability: number | null;
}

type Chat = { role: string; content: string }[];

export const proposalKind = {
  rows: (store: RunStore): ProposalExport[] =>
    store.db
      .prepare(
        'SELECT id, step, proposer, family, level, type, prompt, raw AS output, outcome, detail, task_id, learnability FROM proposals ORDER BY id',
      )
      .all() as ProposalExport[],
  extraInfo: {
    index: 'int64',
    id: 'int64',
    step: 'int64',
    proposer: 'string',
    family: 'string',
    level: 'int32',
    type: 'string',
    outcome: 'string',
    task_id: 'string',
    learnability: 'double',
  } as const,
  toExported(r: ProposalExport, index: number) {
    const prompt: Chat = [{ role: 'user', content: r.prompt }];
    const reward = r.learnability ?? 0;
    return {
      record: r,
      trl: {
        prompt,
        completion: [{ role: 'assistant', content: r.output }],
        reward,
        label: reward > 0,
        proposer: r.proposer,
        outcome: r.outcome,
        family: r.family,
        level: r.level,
        type: r.type,
      },
      verl: {
        data_source: `cogen/proposals/${r.proposer}`,
        prompt,
        ability: `propose.${r.type}`,
        reward_model: { style: 'rule', ground_truth: r.output },
        extra_info: {
          index,
          id: r.id,
          step: r.step,
          proposer: r.proposer,
          family: r.family,
          level: r.level,
          type: r.type,
          outcome: r.outcome,
          task_id: r.task_id,
          learnability: r.learnability,
        },
      },
    };
  },
};
