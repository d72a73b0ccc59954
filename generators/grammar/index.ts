// The typed program grammar every family writes in: the tree and its walker (tree.ts), the printer
// (print.ts), the reference interpreter that screens candidates (interpret.ts, scope.ts, values.ts),
// the sampler that grows random expressions (sample.ts) and the productions it grows them from
// (productions.ts).
export * from './tree.js';
export { printExpr, printProgram } from './print.js';
export { EvalError, evaluate } from './interpret.js';
export { DEFAULT_BOUNDS, isTidy, type ValueBounds } from './values.js';
export {
  FIXED_CHOOSER,
  gen,
  leaf,
  newCtx,
  withChooser,
  WORDS,
  type Chooser,
  type GenCtx,
  type Production,
} from './sample.js';
export { P, prods, type ProdName } from './productions.js';
