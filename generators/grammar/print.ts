// The printer: a tree to JavaScript source text, with the fewest parentheses precedence allows.
import type { BinOp, Expr, Prog, Stmt } from './tree.js';

const BIN_PREC: Record<BinOp, number> = {
  '||': 4,
  '&&': 5,
  '|': 6,
  '^': 7,
  '&': 8,
  '===': 9,
  '!==': 9,
  '<': 10,
  '<=': 10,
  '>': 10,
  '>=': 10,
  '<<': 11,
  '>>': 11,
  '+': 12,
  '-': 12,
  '*': 13,
  '/': 13,
  '%': 13,
};

function prec(e: Expr): number {
  switch (e.kind) {
    case 'lit':
      return typeof e.value === 'number' && e.value < 0 ? 14 : 20;
    case 'var':
    case 'arr':
    case 'obj':
      return 20;
    case 'call':
    case 'meth':
    case 'prop':
    case 'idx':
    case 'apply':
      return 19;
    case 'un':
      return 14;
    case 'bin':
      return BIN_PREC[e.op];
    case 'cond':
      return 3;
    case 'fn':
    case 'spread':
      return 2;
  }
}

const wrap = (s: string, yes: boolean): string => (yes ? `(${s})` : s);
const list = (xs: Expr[]): string => xs.map(printExpr).join(', ');

export function printExpr(e: Expr): string {
  switch (e.kind) {
    case 'lit':
      return JSON.stringify(e.value);
    case 'var':
      return e.name;
    case 'bin': {
      const p = BIN_PREC[e.op];
      return `${wrap(printExpr(e.left), prec(e.left) < p)} ${e.op} ${wrap(printExpr(e.right), prec(e.right) <= p)}`;
    }
    case 'un': {
      const inner = printExpr(e.arg);
      const needs = prec(e.arg) < 14 || (e.op === '-' && inner.startsWith('-'));
      return `${e.op}${wrap(inner, needs)}`;
    }
    case 'cond':
      return `${wrap(printExpr(e.test), prec(e.test) <= 3)} ? ${wrap(printExpr(e.consequent), prec(e.consequent) < 3)} : ${wrap(printExpr(e.alternate), prec(e.alternate) < 3)}`;
    case 'call':
      return `${e.callee}(${list(e.args)})`;
    case 'apply':
      return `${wrap(printExpr(e.callee), prec(e.callee) < 19)}(${list(e.args)})`;
    case 'meth':
      return `${wrap(printExpr(e.object), prec(e.object) < 19)}.${e.method}(${list(e.args)})`;
    case 'prop':
      return `${wrap(printExpr(e.object), prec(e.object) < 19)}.${e.name}`;
    case 'idx':
      return `${wrap(printExpr(e.object), prec(e.object) < 19)}[${printExpr(e.index)}]`;
    case 'arr':
      return `[${list(e.items)}]`;
    case 'obj':
      return e.fields.length === 0
        ? '{}'
        : `{ ${e.fields.map(([key, x]) => (key === null ? `...${printExpr(x)}` : `${key}: ${printExpr(x)}`)).join(', ')} }`;
    case 'fn': {
      const body = printExpr(e.body);
      return `(${e.params.join(', ')}) => ${wrap(body, e.body.kind === 'obj' || prec(e.body) < 3)}`;
    }
    case 'spread':
      return `...${printExpr(e.arg)}`;
  }
}

function printStmts(body: Stmt[], ind: string): string[] {
  const out: string[] = [];
  const inner = ind + '  ';
  for (const s of body) {
    switch (s.kind) {
      case 'let':
        out.push(`${ind}${s.constant ? 'const' : 'let'} ${s.name} = ${printExpr(s.init)};`);
        break;
      case 'set':
        out.push(s.op === '++' ? `${ind}${s.name}++;` : `${ind}${s.name} ${s.op} ${printExpr(s.value!)};`);
        break;
      case 'seti':
        out.push(`${ind}${s.name}[${printExpr(s.index)}] = ${printExpr(s.value)};`);
        break;
      case 'for':
        out.push(`${ind}for (let ${s.name} = ${printExpr(s.from)}; ${s.name} < ${printExpr(s.to)}; ${s.name}++) {`);
        out.push(...printStmts(s.body, inner), `${ind}}`);
        break;
      case 'forof':
        out.push(`${ind}for (const ${s.name} of ${printExpr(s.iterable)}) {`);
        out.push(...printStmts(s.body, inner), `${ind}}`);
        break;
      case 'while':
        out.push(`${ind}while (${printExpr(s.test)}) {`);
        out.push(...printStmts(s.body, inner), `${ind}}`);
        break;
      case 'if': {
        const only = s.consequent[0]!;
        if (!s.alternate && s.consequent.length === 1 && only.kind === 'ret') {
          out.push(`${ind}if (${printExpr(s.test)}) return ${printExpr(only.value)};`);
        } else {
          out.push(`${ind}if (${printExpr(s.test)}) {`, ...printStmts(s.consequent, inner));
          if (s.alternate) out.push(`${ind}} else {`, ...printStmts(s.alternate, inner));
          out.push(`${ind}}`);
        }
        break;
      }
      case 'ret':
        out.push(`${ind}return ${printExpr(s.value)};`);
        break;
    }
  }
  return out;
}

/** Source text of `function f(...)`: one line when the body is a single return, else indented. */
export function printProgram(p: Prog): string {
  const head = `function f(${p.params.map((q) => q.name).join(', ')})`;
  const only = p.body[0]!;
  if (p.body.length === 1 && only.kind === 'ret') return `${head} { return ${printExpr(only.value)}; }`;
  return [`${head} {`, ...printStmts(p.body, '  '), '}'].join('\n');
}
