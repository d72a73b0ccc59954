// Coin change (arithmetic): pay an amount with exactly a given number of coins.
import { defineProblemFamily, problemSkill, distinctInts } from './kit.js';

const ID = 'coin-change';

const verifier = `function f(answer, data) {
  if (!Array.isArray(answer) || answer.length !== data.coins.length) return 0;
  var total = 0, count = 0;
  for (var i = 0; i < answer.length; i++) {
    var n = answer[i];
    if (typeof n !== 'number' || n % 1 !== 0 || n < 0 || n > 1000) return 0;
    total += n * data.coins[i]; count += n;
  }
  return total === data.amount && count === data.count ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  kinds: number;
  coins: number;
  maxCoin: number;
}

const LEVELS: Level[] = [
  { kinds: 2, coins: 3, maxCoin: 5 },
  { kinds: 3, coins: 5, maxCoin: 10 },
  { kinds: 4, coins: 7, maxCoin: 25 },
  { kinds: 5, coins: 10, maxCoin: 50 },
  { kinds: 6, coins: 14, maxCoin: 100 },
];

export const coinChange = defineProblemFamily({
  id: ID,
  name: 'Exact coin change',
  description: 'pay an amount with exactly N coins of given denominations',
  domain: 'arithmetic',
  skills: [
    problemSkill(
      ID,
      'combine',
      'linear combinations of coins',
      'find counts of two or three coin values that pay an amount',
      [],
      0,
    ),
    problemSkill(ID, 'count', 'a fixed number of coins', 'meet a sum and a count together', [`${ID}.combine`], 2),
  ],
  levels: LEVELS,
  growth: {
    kinds: { by: 3, max: 300, why: 'the coin values would make a statement of many thousands of characters' },
    coins: { by: 5 },
    maxCoin: { by: 10 },
  },
  verifier,
  size: (d) => (d as { coins: number[] }).coins.length,
  draw(rng, L) {
    const coins = distinctInts(rng, L.kinds, 1, L.maxCoin).sort((a, b) => a - b);
    const counts = coins.map(() => 0);
    for (let k = 0; k < L.coins; k++) counts[rng.int(0, L.kinds - 1)]!++;
    const amount = counts.reduce((s, n, i) => s + n * coins[i]!, 0);
    const plusOne = counts.map((n, i) => (i === 0 ? n + 1 : n));
    const moved = counts.map((n, i) => (i === 0 ? n + 1 : i === counts.length - 1 ? Math.max(0, n - 1) : n));
    return {
      statement:
        `Coins have the values ${JSON.stringify(coins)}. Pay exactly ${amount} using exactly ${L.coins} coins in all. ` +
        `Answer with a JSON array of how many coins of each value you use, in the same order (${L.kinds} counts), e.g. ${JSON.stringify(coins.map(() => 0))}.`,
      data: { coins, amount, count: L.coins },
      witness: counts,
      failures: [plusOne, moved, counts.slice(1), counts.map((n) => n * 2)],
    };
  },
});
