// The native problem families' registry (one file per family, DESIGN.md "Tasks": the verified problem).
import type { ProblemFamily } from './kit.js';
import { countdown } from './countdown.js';
import { subsetSum } from './subset-sum.js';
import { cryptarithm } from './cryptarithm.js';
import { coinChange } from './coin-change.js';

export const PROBLEM_FAMILIES: readonly ProblemFamily[] = [countdown, subsetSum, cryptarithm, coinChange];
