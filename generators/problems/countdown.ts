// Countdown (arithmetic): reach a target with + - * / over given numbers, each used at most once.
// Any expression that reaches the target is accepted; the verifier parses and evaluates it itself.
import type { Json } from '../../core/task.js';
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'countdown';
const SMALL = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const BIG = [25, 50, 75, 100];
/** No product passes this (the grown levels chain many numbers; levels 0-4 never reach it). */
const MAX_VALUE = 1e9;

const verifier = `function f(answer, data) {
  if (typeof answer !== 'string' || answer.length > 200) return 0;
  var s = answer.replace(/\\s+/g, ''), i = 0, left = {}, ok = true;
  for (var k = 0; k < data.numbers.length; k++) left[data.numbers[k]] = (left[data.numbers[k]] || 0) + 1;
  function num() {
    var j = i; while (i < s.length && s[i] >= '0' && s[i] <= '9') i++;
    if (j === i) { ok = false; return 0; }
    var n = Number(s.slice(j, i));
    if (!left[n]) { ok = false; return 0; }
    left[n]--; return n;
  }
  function atom() {
    if (s[i] === '(') { i++; var v = sum(); if (s[i] !== ')') ok = false; i++; return v; }
    return num();
  }
  function prod() {
    var v = atom();
    while (ok && (s[i] === '*' || s[i] === '/')) {
      var op = s[i++], r = atom();
      if (op === '*') v = v * r; else { if (r === 0 || v % r !== 0) ok = false; else v = v / r; }
    }
    return v;
  }
  function sum() {
    var v = prod();
    while (ok && (s[i] === '+' || s[i] === '-')) { var op = s[i++], r = prod(); v = op === '+' ? v + r : v - r; }
    return v;
  }
  var v = sum();
  return ok && i === s.length && v === data.target ? 1 : 0;
}`;

interface Level extends Record<string, number | string | boolean> {
  numbers: number;
  used: number;
  ops: string;
  big: number;
}

const LEVELS: Level[] = [
  { numbers: 3, used: 2, ops: '+-', big: 0 },
  { numbers: 4, used: 3, ops: '+-*', big: 0 },
  { numbers: 5, used: 3, ops: '+-*', big: 1 },
  { numbers: 6, used: 4, ops: '+-*/', big: 1 },
  { numbers: 6, used: 5, ops: '+-*/', big: 2 },
];

export const countdown = defineProblemFamily({
  id: ID,
  name: 'Countdown numbers',
  description: 'reach a target number with + - * / over given numbers, each used at most once',
  domain: 'arithmetic',
  skills: [
    problemSkill(
      ID,
      'add',
      'reach a target by adding and subtracting',
      'combine numbers with + and - to hit a target',
      [],
      0,
    ),
    problemSkill(ID, 'mul', 'use products', 'combine numbers with multiplication as well', [`${ID}.add`], 1),
    problemSkill(ID, 'div', 'exact division', 'use exact division among the operations', [`${ID}.mul`], 3),
  ],
  levels: LEVELS,
  growth: {
    numbers: { by: 3 },
    used: { by: 1, every: 2, max: 34, why: "the expression would pass the verifier's 200 characters" },
    big: { by: 1, every: 4 },
  },
  verifier,
  size: (d) => (d as { numbers: number[] }).numbers.length,
  draw(rng, L) {
    const nums = [
      ...Array.from({ length: L.big }, () => rng.pick(BIG)),
      ...Array.from({ length: L.numbers - L.big }, () => rng.pick(SMALL)),
    ];
    const order = shuffled(rng, nums);
    let expr = String(order[0]);
    let value = order[0]!;
    for (let k = 1; k < L.used; k++) {
      const n = order[k]!;
      const ops = [...L.ops].filter((op) =>
        op === '-'
          ? value - n > 0
          : op === '/'
            ? value % n === 0 && n > 1
            : op === '*'
              ? n > 1 && value * n <= MAX_VALUE
              : true,
      );
      const op = rng.pick(ops);
      value = op === '+' ? value + n : op === '-' ? value - n : op === '*' ? value * n : value / n;
      expr = k === L.used - 1 ? `${expr}${op}${n}` : `(${expr}${op}${n})`;
    }
    const numbers = shuffled(rng, nums).sort((a, b) => a - b);
    const data: Json = { numbers, target: value };
    const unused = Math.max(...BIG) + 1;
    return {
      statement:
        `Using the numbers ${numbers.join(', ')} (each at most once; not all need to be used) and the operations + - * / with parentheses, ` +
        `write an expression equal to ${value}. Division must be exact. Answer with the expression as a JSON string, e.g. "(2+3)*4".`,
      data,
      witness: expr,
      failures: [
        `${expr}+1`,
        `${expr}-${order[0]}+${order[0]}+${order[0]}`,
        `(${expr})*${unused}/${unused}`,
        String(value),
      ],
    };
  },
});
