// The `serve` section of a run config: how a served run treats the trainers that talk to it.
import { z } from 'zod';
import { MAX_COMPLETION_CHARS } from '../../core/rules.js';

export const serveConfigSchema = z
  .object({
    /** A sampled task not scored within this many seconds is abandoned: counted, never fed to the curriculum. */
    ttlSeconds: z.number().positive().default(900),
    /** Most completions in one score request, or answers in one probe report. */
    maxItems: z.number().int().positive().max(65536).default(1024),
    /** Most tasks in one sample request (each new task is generated and validated in the sandbox). */
    maxSample: z.number().int().positive().max(4096).default(256),
    /** Largest request body, in bytes (a larger one gets 413). */
    maxBodyBytes: z
      .number()
      .int()
      .positive()
      .default(8 * 1024 * 1024),
    /** Most characters of one completion (a longer one gets 400). */
    maxCompletionChars: z.number().int().positive().default(MAX_COMPLETION_CHARS),
    /** Most OpenEnv WebSocket sessions open at once. */
    maxSessions: z.number().int().positive().default(64),
  })
  .strict();

export type ServeConfig = z.infer<typeof serveConfigSchema>;
