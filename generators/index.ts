// The generators' door (docs/DESIGN.md, "Tasks" and "Skills and the skill graph"): the families
// (families/, problems/) behind registry.ts, their skill taxonomy (taxonomy.ts), and turning a
// draft into a validated Task through the sandbox (materialise.ts, generate.ts).
export { canonicalHash, canonicalForm, compactProgram, minify, tokenize } from './hash.js';
export { parseCompact, renderCompact, renderNatural, solverSystemPrompt } from './render.js';
export { mutate, applicableOps, MUTATION_OPS, type MutationOp } from './mutate.js';
export { labelProgram, type ProgramLabel } from './label.js';
export {
  crossover,
  CROSSOVER,
  DIRECTED_OPS,
  DIRECTIONS,
  directedApplies,
  directedMutate,
  directedOps,
  directionOf,
  FRONTIER_OPS,
  FRONTIER_PROPOSER,
  type DirectedOp,
  type Direction,
  type FrontierOp,
} from './directed.js';
export type { Family } from './types.js';
export { isJsonValue, taskId } from './identity.js';
// The sampler's choice points, for a proposer that learns where the fixed weights choose.
export { FIXED_CHOOSER, type Chooser, type Production } from './grammar/index.js';
export { productionLabel, type Drawn } from './kit.js';
export {
  families,
  problemFamilies,
  getFamily,
  getProblemFamily,
  familyInfo,
  drawReference,
  allSkills,
  type FamilyInfo,
} from './registry.js';
export type { ProblemFamily, Domain } from './problems/kit.js';
export { DOMAINS } from './problems/kit.js';
export { taxonomy, formatTaxonomy, levelRange, growthLines, type Taxonomy, type TaxonomyFamily } from './taxonomy.js';
export { REJECT_REASONS, materialise, type Materialised, type RejectReason } from './materialise.js';
export { generateTask, type GenerateOptions } from './generate.js';
export { taskWorking, workingShape, working, type OperandStyle, type Working } from './working.js';
