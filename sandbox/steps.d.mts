// Types for what TypeScript files read from steps.mjs (plain JavaScript, loaded as-is in workers).
/** Steps per millisecond of deadline: a call armed with timeoutMs may take timeoutMs × STEPS_PER_MS steps. */
export const STEPS_PER_MS: number;
/** The wall-clock safety net: this many times a call's deadline. */
export const WALL_FACTOR: number;
/** Native work (meter.mjs's units) that each step of a budget or deadline allows. */
export const NATIVE_PER_STEP: number;
