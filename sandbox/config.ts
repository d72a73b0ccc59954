// The sandbox's settings as zod schemas, the one home of their defaults: src/run/config.ts embeds
// `sandboxConfigSchema` under `sandbox`, and createSandbox and the budgets read the same defaults.
import { z } from 'zod';

/** An answer's budget in interpreter steps: clamp(factor × the reference's measured cost, floor, cap) (budget.ts). */
export const budgetSchema = z
  .strictObject({
    factor: z.number().min(1).default(20),
    floor: z.number().int().positive().default(20_000),
    cap: z.number().int().positive().default(5_000_000),
  })
  .refine((b) => b.floor <= b.cap, { message: 'budget.floor must not exceed budget.cap' });

export const sandboxConfigSchema = z
  .strictObject({
    workers: z.number().int().positive().optional(),
    /** Deadline per call (ms), counted in steps at a fixed rate (10,000 a ms, steps.mjs), with a wall-clock safety net 20× it; answers are bounded by their budget too. */
    timeoutMs: z.number().int().positive().default(50),
    memoryBytes: z
      .number()
      .int()
      .positive()
      .default(16 * 1024 * 1024),
    /** Set on each task when it is validated, from the reference's cost. */
    budget: budgetSchema.prefault({}),
  })
  .prefault({});

export type SandboxConfig = z.infer<typeof sandboxConfigSchema>;
export const sandboxDefaults: Readonly<SandboxConfig> = Object.freeze(sandboxConfigSchema.parse({}));
