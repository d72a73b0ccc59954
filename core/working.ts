// A working's template as an answer shape (core/task.ts AnswerShape): the text a solver copies and
// the holes it writes values in, one step of a program's evaluation after another
// (generators/working.ts makes them; docs/solver-view.md, "The working", says why). The template
// travels as a string, like every answer shape, so that the built-in solver's grammars and its
// shard workers key on it as they key on `int` or `[int,str]`.

/** What a hole holds. */
export type HoleType = 'int' | 'bool';
/** A template's part: text the solver copies, or a hole it writes a value of that type in. */
export type WorkPart = string | { hole: HoleType };

const PREFIX = 'work:';

/** The answer shape of a template (its parts as JSON after `work:`). */
export const workShape = (parts: readonly WorkPart[]): string => PREFIX + JSON.stringify(parts);

/** Whether an answer shape is a working's template. */
export const isWorkShape = (shape: string): boolean => shape.startsWith(PREFIX);

/** A working shape's parts (texts and holes alternate, a hole last). Throws on any other shape. */
export function workParts(shape: string): WorkPart[] {
  if (!isWorkShape(shape)) throw new Error(`"${shape.slice(0, 40)}" is not a working's shape`);
  const parts = JSON.parse(shape.slice(PREFIX.length)) as WorkPart[];
  const last = parts[parts.length - 1];
  if (!Array.isArray(parts) || typeof last !== 'object' || !last) throw new Error('a working must end with a hole');
  return parts;
}
