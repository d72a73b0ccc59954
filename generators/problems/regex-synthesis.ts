// Regex synthesis (strings): a regular expression that matches every positive word and no negative
// one, no longer than a limit. The verifier compiles the answer and checks every word.
import type { Rng } from '../../core/rng.js';
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'regex-synthesis';

const verifier = `function f(answer, data) {
  if (typeof answer !== 'string' || answer.length === 0 || answer.length > data.maxLength) return 0;
  if (!/^[a-z()|*+?]+$/.test(answer)) return 0;
  var re;
  try { re = new RegExp('^(?:' + answer + ')$'); } catch (e) { return 0; }
  for (var i = 0; i < data.positive.length; i++) if (!re.test(data.positive[i])) return 0;
  for (var j = 0; j < data.negative.length; j++) if (re.test(data.negative[j])) return 0;
  return 1;
}`;

interface Level extends Record<string, number> {
  atoms: number;
  words: number;
}

const LEVELS: Level[] = [
  { atoms: 2, words: 3 },
  { atoms: 2, words: 4 },
  { atoms: 3, words: 5 },
  { atoms: 4, words: 6 },
  { atoms: 5, words: 8 },
];

type Atom = { text: string; sample: (rng: Rng) => string };

function atom(rng: Rng): Atom {
  const c = rng.pick(['a', 'b', 'c', 'd']);
  const kind = rng.int(0, 4);
  if (kind === 0) return { text: c, sample: () => c };
  if (kind === 1) return { text: `${c}+`, sample: (r) => c.repeat(r.int(1, 3)) };
  if (kind === 2) return { text: `${c}*`, sample: (r) => c.repeat(r.int(0, 3)) };
  if (kind === 3) return { text: `${c}?`, sample: (r) => (r.bool() ? c : '') };
  const d = c === 'a' ? 'b' : 'a';
  return { text: `(${c}|${d})`, sample: (r) => (r.bool() ? c : d) };
}

export const regexSynthesis = defineProblemFamily({
  id: ID,
  name: 'Regex synthesis',
  description: 'a regular expression that accepts the positive words and rejects the negative ones',
  domain: 'strings',
  skills: [
    problemSkill(ID, 'quantifiers', 'quantifiers', 'use + * ? to generalise from examples', [], 0),
    problemSkill(
      ID,
      'alternation',
      'alternation and grouping',
      'combine choices with | and ( )',
      [`${ID}.quantifiers`],
      2,
    ),
  ],
  levels: LEVELS,
  growth: {
    atoms: { by: 1, every: 12, max: 8, why: "the verifier's matching could backtrack past its deadline" },
    words: { by: 4 },
  },
  verifier,
  size: (d) =>
    (d as { positive: string[]; negative: string[] }).positive.length + (d as { negative: string[] }).negative.length,
  draw(rng, L) {
    const atoms = Array.from({ length: L.atoms }, () => atom(rng));
    const regex = atoms.map((a) => a.text).join('');
    const re = new RegExp(`^(?:${regex})$`);
    const positive = [...new Set(Array.from({ length: L.words * 3 }, () => atoms.map((a) => a.sample(rng)).join('')))]
      .slice(0, L.words)
      .sort();
    const negative: string[] = [];
    // (60 tries up to level 4, where a level has at most 8 words; more for the grown levels' words)
    for (let k = 0; k < Math.max(60, 7 * L.words) && negative.length < L.words; k++) {
      const base = rng.pick(positive);
      const w = rng.bool()
        ? base + rng.pick(['a', 'b', 'c', 'd'])
        : base.slice(0, rng.int(0, Math.max(0, base.length - 1))) + rng.pick(['a', 'b', 'c', 'd', '']);
      if (!re.test(w) && !negative.includes(w)) negative.push(w);
    }
    negative.sort();
    const maxLength = regex.length + 4;
    return {
      statement:
        `Write a regular expression (letters a-z, ( ) | * + ? only; at most ${maxLength} characters) that matches the whole of every word in ${JSON.stringify(positive)} ` +
        `and of none of the words in ${JSON.stringify(negative)} (the empty string is written ""). Answer with the expression as a JSON string.`,
      data: { positive, negative, maxLength },
      witness: regex,
      failures: [positive.join('|'), `(a|b|c|d)*`, regex.replace(/[+*?]/, ''), `${regex}${regex}`],
    };
  },
});
