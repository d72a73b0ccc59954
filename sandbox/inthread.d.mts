// Types for inthread.mjs (plain JavaScript, like the engine it drives).
import type { Limits } from './types.js';

export function startInThread(): Promise<void>;
export function runInThread(
  program: string,
  argsList: string[],
  limits: Limits,
  budget?: number,
): { results: ([0, string] | [string, string])[]; steps: number; native: number; copied: number };
