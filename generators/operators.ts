// JavaScript's binary operators on operands already evaluated: the one table for the evaluators
// that run a program's expressions outside the sandbox (grammar/interpret.ts, working.ts). `&&` and
// `||` are not here: whether their right side is evaluated is the caller's to decide.

/** What binaryOp returns for an operator that is not in the table. */
export const NO_OP: unique symbol = Symbol('not a binary operator');

/** a op b as JavaScript computes it, or NO_OP. */
export function binaryOp(op: string, a: unknown, b: unknown): unknown {
  const x = a as number;
  const y = b as number;
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      return x / y;
    case '%':
      return x % y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
    case '===':
      return a === b;
    case '!==':
      return a !== b;
    case '&':
      return x & y;
    case '|':
      return x | y;
    case '^':
      return x ^ y;
    case '<<':
      return x << y;
    case '>>':
      return x >> y;
    case '>>>':
      return x >>> y;
  }
  return NO_OP;
}
