// Longest common subsequence (strings): a longest word that is a subsequence of both words; the
// verifier computes the length itself, so any longest common subsequence is accepted.
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'common-subsequence';

const verifier = `function f(answer, data) {
  var a = data.a, b = data.b, m = a.length, n = b.length, d = [];
  for (var i = 0; i <= m; i++) { d.push([]); for (var j = 0; j <= n; j++) d[i].push(0); }
  for (var i2 = 1; i2 <= m; i2++) for (var j2 = 1; j2 <= n; j2++)
    d[i2][j2] = a[i2 - 1] === b[j2 - 1] ? d[i2 - 1][j2 - 1] + 1 : Math.max(d[i2 - 1][j2], d[i2][j2 - 1]);
  if (typeof answer !== 'string' || answer.length !== d[m][n]) return 0;
  function sub(w, s) { var k = 0; for (var p = 0; p < s.length && k < w.length; p++) if (s[p] === w[k]) k++; return k === w.length; }
  return sub(answer, a) && sub(answer, b) ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  length: number;
  alphabet: number;
}

const LEVELS: Level[] = [
  { length: 4, alphabet: 3 },
  { length: 6, alphabet: 3 },
  { length: 8, alphabet: 4 },
  { length: 11, alphabet: 4 },
  { length: 14, alphabet: 5 },
];

function lcs(a: string, b: string): string {
  const d = Array.from({ length: a.length + 1 }, () => Array.from({ length: b.length + 1 }, () => 0));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      d[i]![j] = a[i - 1] === b[j - 1] ? d[i - 1]![j - 1]! + 1 : Math.max(d[i - 1]![j]!, d[i]![j - 1]!);
  let out = '';
  let i = a.length;
  let j = b.length;
  while (i > 0 && j > 0) {
    if (a[i - 1] === b[j - 1]) {
      out = a[i - 1] + out;
      i--;
      j--;
    } else if (d[i - 1]![j]! >= d[i]![j - 1]!) i--;
    else j--;
  }
  return out;
}

export const commonSubsequence = defineProblemFamily({
  id: ID,
  name: 'Longest common subsequence',
  description: 'a longest word that is a subsequence of two given words',
  domain: 'strings',
  skills: [
    problemSkill(ID, 'subsequence', 'subsequences', 'keep letters in order, skipping some', [], 0),
    problemSkill(
      ID,
      'dp',
      'dynamic programming over two strings',
      'the longest common subsequence table',
      [`${ID}.subsequence`, 'edit-script.edit'],
      2,
    ),
  ],
  levels: LEVELS,
  growth: {
    length: { by: 3, every: 2, max: 110, why: "the verifier's check would near a tenth of the answer budget cap" },
    alphabet: { by: 1, every: 4, max: 26, why: 'the alphabet has 26 letters' },
  },
  verifier,
  size: (d) => (d as { a: string }).a.length,
  draw(rng, L) {
    const letters = [...'abcdef'.slice(0, L.alphabet)];
    const a = Array.from({ length: L.length }, () => rng.pick(letters)).join('');
    const b = Array.from({ length: L.length }, () => rng.pick(letters)).join('');
    const w = lcs(a, b);
    return {
      statement: `Find a longest word that is a subsequence of both "${a}" and "${b}" (its letters appear in both, in order, not necessarily next to each other). Answer with the word as a JSON string.`,
      data: { a, b },
      witness: w,
      failures: [
        w.slice(1),
        w + letters[0],
        [...w].reverse().join('') === w ? w.slice(0, -1) : [...w].reverse().join(''),
        a,
      ],
    };
  },
});
