// The sandbox room's second door, for test/ and bench/ only: the internals they check directly. The
// house enters by index.ts (docs/DESIGN.md, "The house"); nothing in it imports this file.
// @ts-expect-error plain JS module without type declarations
export { INTRINSICS } from './engine.mjs';
export { FAILURE_REASONS, type FailureReason, type Limits } from './types.js';
export { runTwiceMetered } from './validate.js';
export { verifyAnswer, verifyMany, verifyManyMetered } from './verify.js';
export { NATIVE_PER_STEP } from './steps.mjs';
export { DETAIL_MAX, TEXT_MAX } from './readout.mjs';
export { runInThread, startInThread } from './inthread.mjs';
