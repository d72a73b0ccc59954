// Edit script (strings): turn one word into another with the fewest single-letter edits; the
// verifier applies the script and computes the edit distance itself.
import type { Rng } from '../../core/rng.js';
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'edit-script';
const ALPHABET = 'abcdefgh';

const verifier = `function f(answer, data) {
  var s = data.from, t = data.to, m = s.length, n = t.length, d = [];
  for (var i = 0; i <= m; i++) { d.push([]); for (var j = 0; j <= n; j++) d[i].push(i === 0 ? j : j === 0 ? i : 0); }
  for (var i2 = 1; i2 <= m; i2++) for (var j2 = 1; j2 <= n; j2++)
    d[i2][j2] = Math.min(d[i2 - 1][j2] + 1, d[i2][j2 - 1] + 1, d[i2 - 1][j2 - 1] + (s[i2 - 1] === t[j2 - 1] ? 0 : 1));
  if (!Array.isArray(answer) || answer.length !== d[m][n]) return 0;
  var w = s.split('');
  for (var k = 0; k < answer.length; k++) {
    var op = answer[k];
    if (!Array.isArray(op) || typeof op[1] !== 'number' || op[1] % 1 !== 0 || op[1] < 0) return 0;
    if (op[0] === 'insert' && op.length === 3 && typeof op[2] === 'string' && op[2].length === 1 && op[1] <= w.length) w.splice(op[1], 0, op[2]);
    else if (op[0] === 'delete' && op.length === 2 && op[1] < w.length) w.splice(op[1], 1);
    else if (op[0] === 'replace' && op.length === 3 && typeof op[2] === 'string' && op[2].length === 1 && op[1] < w.length) w[op[1]] = op[2];
    else return 0;
  }
  return w.join('') === t ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  length: number;
  edits: number;
}

const LEVELS: Level[] = [
  { length: 3, edits: 1 },
  { length: 4, edits: 2 },
  { length: 6, edits: 3 },
  { length: 8, edits: 4 },
  { length: 10, edits: 6 },
];

type Op = [string, number] | [string, number, string];

/** The edit distance table and one optimal script, read back from the table. */
function script(s: string, t: string): Op[] {
  const m = s.length;
  const n = t.length;
  const d = Array.from({ length: m + 1 }, (_, i) =>
    Array.from({ length: n + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= m; i++)
    for (let j = 1; j <= n; j++)
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1));
  // Walk back from the end; ops at later positions come first so earlier indices stay valid.
  const ops: Op[] = [];
  let i = m;
  let j = n;
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0 && d[i]![j] === d[i - 1]![j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1)) {
      if (s[i - 1] !== t[j - 1]) ops.push(['replace', i - 1, t[j - 1]!]);
      i--;
      j--;
    } else if (i > 0 && d[i]![j] === d[i - 1]![j]! + 1) {
      ops.push(['delete', i - 1]);
      i--;
    } else {
      ops.push(['insert', i, t[j - 1]!]);
      j--;
    }
  }
  return ops;
}

const word = (rng: Rng, n: number): string => Array.from({ length: n }, () => rng.pick([...ALPHABET])).join('');

export const editScript = defineProblemFamily({
  id: ID,
  name: 'Edit script',
  description: 'a shortest sequence of insert / delete / replace edits from one word to another',
  domain: 'strings',
  skills: [
    problemSkill(ID, 'edit', 'apply single-letter edits', 'insert, delete and replace letters by position', [], 0),
    problemSkill(ID, 'distance', 'edit distance', 'find a shortest edit script (Levenshtein)', [`${ID}.edit`], 2),
  ],
  levels: LEVELS,
  growth: {
    length: {
      by: 5,
      every: 4,
      max: 85,
      why: "the verifier's minimality check would near a tenth of the answer budget cap",
    },
    edits: { by: 1 },
  },
  verifier,
  size: (d) => (d as { from: string }).from.length,
  draw(rng, L) {
    const from = word(rng, L.length);
    const w = from.split('');
    for (let k = 0; k < L.edits; k++) {
      const kind = rng.int(0, 2);
      if (kind === 0) w.splice(rng.int(0, w.length), 0, rng.pick([...ALPHABET]));
      else if (kind === 1 && w.length > 1) w.splice(rng.int(0, w.length - 1), 1);
      else w[rng.int(0, w.length - 1)] = rng.pick([...ALPHABET]);
    }
    if (w.join('') === from) w[0] = ALPHABET[(ALPHABET.indexOf(w[0]!) + 1) % ALPHABET.length]!;
    const to = w.join('');
    const ops = script(from, to);
    const padded: Op[] = [...ops, ['insert', 0, 'a'], ['delete', 0]];
    return {
      statement:
        `Turn the word "${from}" into "${to}" with as few single-letter edits as possible, applied in order. An edit is ["insert", i, "x"] (put x before position i), ` +
        `["delete", i] or ["replace", i, "x"]; positions count from 0 in the word as it is at that edit. Answer with the JSON array of edits.`,
      data: { from, to },
      witness: ops,
      failures: [ops.slice(1), padded, [...ops].reverse(), [['replace', 0, 'z'], ...ops.slice(1)]],
    };
  },
});
