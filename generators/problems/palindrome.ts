// Palindrome construction (strings): arrange all the given letters into a palindrome.
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'palindrome';

const verifier = `function f(answer, data) {
  if (typeof answer !== 'string' || answer.length !== data.letters.length) return 0;
  var count = {};
  for (var i = 0; i < data.letters.length; i++) count[data.letters[i]] = (count[data.letters[i]] || 0) + 1;
  for (var j = 0; j < answer.length; j++) {
    if (!count[answer[j]]) return 0;
    count[answer[j]]--;
    if (answer[j] !== answer[answer.length - 1 - j]) return 0;
  }
  return 1;
}`;

interface Level extends Record<string, number> {
  half: number;
  alphabet: number;
}

const LEVELS: Level[] = [
  { half: 2, alphabet: 2 },
  { half: 3, alphabet: 3 },
  { half: 4, alphabet: 4 },
  { half: 6, alphabet: 5 },
  { half: 8, alphabet: 6 },
];

export const palindrome = defineProblemFamily({
  id: ID,
  name: 'Palindrome from letters',
  description: 'arrange every given letter into a palindrome',
  domain: 'strings',
  skills: [
    problemSkill(ID, 'mirror', 'mirror a half', 'pair letters around the centre', [], 0),
    problemSkill(
      ID,
      'counting',
      'letter counts',
      'use letter parities to place the middle letter',
      [`${ID}.mirror`],
      1,
    ),
  ],
  levels: LEVELS,
  growth: { half: { by: 4 }, alphabet: { by: 1, every: 4, max: 26, why: 'the alphabet has 26 letters' } },
  verifier,
  size: (d) => (d as { letters: string }).letters.length,
  draw(rng, L) {
    const letters = 'abcdefghij'.slice(0, L.alphabet);
    const half = Array.from({ length: L.half }, () => rng.pick([...letters])).join('');
    const middle = rng.bool() ? rng.pick([...letters]) : '';
    const witness = half + middle + [...half].reverse().join('');
    const scrambled = shuffled(rng, [...witness]).join('');
    const notPal =
      witness[0] === witness[witness.length - 1] && witness.length > 2
        ? witness.slice(1) + witness[0]
        : [...witness].sort().join('');
    return {
      statement: `Arrange all of these letters, each exactly as often as it appears, into a word that reads the same backwards: "${scrambled}". Answer with the word as a JSON string.`,
      data: { letters: scrambled },
      witness,
      failures: [notPal, witness.slice(1, -1), half + 'z' + [...half].reverse().join(''), scrambled],
    };
  },
});
