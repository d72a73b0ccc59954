// Fixtures shared by the curricula tests.
import type { Skill } from '../core/task.js';

/** A skill of `family` at `level`, with no prerequisites: all a controller reads of one. */
export const skill = (family: string, level: number, name: string): Skill => ({
  id: `${family}.${name}`,
  family,
  name,
  description: '',
  requires: [],
  level,
});
