// The native problem families' registry (one file per family, docs/DESIGN.md "Tasks": the verified
// problem), grouped by domain.
import type { ProblemFamily } from './kit.js';
import { countdown } from './countdown.js';
import { subsetSum } from './subset-sum.js';
import { cryptarithm } from './cryptarithm.js';
import { coinChange } from './coin-change.js';
import { sudoku } from './sudoku.js';
import { nqueens } from './nqueens.js';
import { graphColouring } from './graph-colouring.js';
import { sumGrid } from './sum-grid.js';
import { shortestPath } from './shortest-path.js';
import { topologicalOrder } from './topological-order.js';
import { components } from './components.js';
import { bipartite } from './bipartite.js';
import { editScript } from './edit-script.js';
import { regexSynthesis } from './regex-synthesis.js';
import { palindrome } from './palindrome.js';
import { commonSubsequence } from './common-subsequence.js';
import { maze } from './maze.js';
import { slidingPuzzle } from './sliding-puzzle.js';
import { waterJugs } from './water-jugs.js';
import { hanoi } from './hanoi.js';
import { bezout } from './bezout.js';
import { modInverse } from './mod-inverse.js';
import { factorise } from './factorise.js';
import { diophantine } from './diophantine.js';

export const PROBLEM_FAMILIES: readonly ProblemFamily[] = [
  ...[countdown, subsetSum, cryptarithm, coinChange], // arithmetic
  ...[sudoku, nqueens, graphColouring, sumGrid], // constraints
  ...[shortestPath, topologicalOrder, components, bipartite], // graphs
  ...[editScript, regexSynthesis, palindrome, commonSubsequence], // strings
  ...[maze, slidingPuzzle, waterJugs, hanoi], // planning
  ...[bezout, modInverse, factorise, diophantine], // number theory
];
