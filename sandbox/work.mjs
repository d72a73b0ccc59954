// The native work meter's globals (meter.mjs), as steps.mjs reads and sets them: units left, where
// the meter pokes when they run out (the interrupt counter), and what it held before. Kept apart
// from steps.mjs, which decides what the units mean for a job.
const WORK_MAX = 0x7fffffff;

/** The meter's globals (work, poke, poked), or null for a module loaded unmetered. */
let meter = null;
/** 4 bytes of the module's own, where the meter pokes outside a context. */
let scratch = 0;
/** The units left when last read or written (the units done since then are workSet − work). */
let workSet = WORK_MAX;
let words = () => null;

/** The module's meter (null: unmetered), with a view of its memory's words. */
export function useMeter(mod, globals, view) {
  meter = globals;
  words = view;
  if (!meter) return;
  scratch = mod.module._malloc(4);
  resetMeter(0);
}

export const metered = () => meter !== null;

/** The meter pokes the counter at `at` (0: its own scratch) from now on, all units left, nothing poked. */
export function resetMeter(at) {
  if (!meter) return;
  meter.poke.value = at || scratch;
  meter.poked.value = 0;
  meter.work.value = workSet = WORK_MAX;
}

/** Units done since they were last read (and now read). */
export function unitsDone() {
  if (!meter) return 0;
  const w = meter.work.value;
  const done = workSet - w;
  workSet = w;
  return done;
}

/** The meter may do `left` more units before it pokes. */
export function allowUnits(left) {
  if (meter) meter.work.value = workSet = Math.max(0, Math.min(WORK_MAX, left));
}

/** Takes `units` done elsewhere (on the host); pokes, as the module would, when that runs them out. */
export function takeUnits(units) {
  if (!meter) return;
  const w = meter.work.value - units;
  meter.work.value = w;
  if (w >= 0 || meter.poked.value) return;
  const m = words();
  meter.poked.value = m[meter.poke.value >> 2];
  m[meter.poke.value >> 2] = 1;
}

/** The interrupt counter's value when the meter set it to 1, or 0 if it did not. */
export const pokedAt = () => (meter ? meter.poked.value : 0);

/** The poke has been counted. */
export function unpoke() {
  if (meter) meter.poked.value = 0;
}

/** Forgets the meter (after a trap, with its module). */
export function forgetMeter() {
  meter = null;
}
