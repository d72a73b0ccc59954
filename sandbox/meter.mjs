// Native work, metered: QuickJS's interrupt counter sees interpreter steps only, so a program whose
// every step starts a long native loop (JSON.stringify of a large value, Array.prototype.fill,
// a string append that copies, a flattened rope) could spend seconds within a small budget of
// steps. This file rewrites the QuickJS WebAssembly module once, as it is loaded, so that every
// function call and loop iteration in it (but the interpreter's own, which the step counter
// covers), and every 2^WORK_PER_BYTE_LOG2 bytes that memory.copy and memory.fill move, draw a unit
// on a counter: a WebAssembly global, `work`. When `work` runs below zero, the
// rewritten code sets the current context's interrupt counter (its address in the global `poke`)
// to 1, so that the interpreter calls the interrupt handler at its very next step, which
// (steps.mjs) charges the native work to the budget and stops the call if it is spent. A single
// native operation still runs to its end; the memory cap bounds what one can do.
//
// Written by hand rather than with a WebAssembly toolkit: it needs only to walk the instructions
// of the code section and insert a few, and a toolkit would be a large dependency loaded by
// every worker thread.

const SECTION = { type: 1, import: 2, function: 3, global: 6, export: 7, code: 10 };
/** Bytes moved by memory.copy or memory.fill per unit of work (log2). */
export const WORK_PER_BYTE_LOG2 = 6;

// ------------------------------------------------------------------ LEB128 and a byte writer
function readU32(b, at) {
  let r = 0;
  let shift = 0;
  for (;;) {
    const x = b[at.i++];
    r |= (x & 0x7f) << shift;
    if ((x & 0x80) === 0) return r >>> 0;
    shift += 7;
  }
}

/** Skips a vector of bytes (its length first). */
function skipBytes(b, at) {
  const n = readU32(b, at);
  at.i += n;
}

function skipLeb(b, at) {
  while (b[at.i++] & 0x80);
}

function u32(n) {
  const out = [];
  do {
    let x = n & 0x7f;
    n >>>= 7;
    if (n !== 0) x |= 0x80;
    out.push(x);
  } while (n !== 0);
  return out;
}

function s32(n) {
  const out = [];
  for (;;) {
    const x = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (x & 0x40) === 0) || (n === -1 && (x & 0x40) !== 0)) {
      out.push(x);
      return out;
    }
    out.push(x | 0x80);
  }
}

// ------------------------------------------------------------------ the module's sections
function sections(bytes) {
  if (bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) throw new Error('not wasm');
  const out = [];
  const at = { i: 8 };
  while (at.i < bytes.length) {
    const id = bytes[at.i++];
    const size = readU32(bytes, at);
    out.push({ id, start: at.i, end: at.i + size });
    at.i += size;
  }
  return out;
}

/** Counts of imported functions and globals (the index spaces start with them). */
function importCounts(bytes, s) {
  const at = { i: s.start };
  const n = readU32(bytes, at);
  let funcs = 0;
  let globals = 0;
  for (let k = 0; k < n; k++) {
    skipBytes(bytes, at);
    skipBytes(bytes, at);
    const kind = bytes[at.i++];
    if (kind === 0) {
      readU32(bytes, at);
      funcs++;
    } else if (kind === 1) {
      at.i++;
      const flag = bytes[at.i++];
      readU32(bytes, at);
      if (flag & 1) readU32(bytes, at);
    } else if (kind === 2) {
      const flag = bytes[at.i++];
      readU32(bytes, at);
      if (flag & 1) readU32(bytes, at);
    } else if (kind === 3) {
      at.i += 2;
      globals++;
    } else throw new Error(`unknown import kind ${kind}`);
  }
  return { funcs, globals };
}

/** Parameter counts of each type (only function types, 0x60). */
function typeParams(bytes, s) {
  const at = { i: s.start };
  const n = readU32(bytes, at);
  const params = [];
  for (let k = 0; k < n; k++) {
    if (bytes[at.i++] !== 0x60) throw new Error('unexpected type form');
    const p = readU32(bytes, at);
    at.i += p;
    params.push(p);
    skipBytes(bytes, at);
  }
  return params;
}

function functionTypes(bytes, s) {
  const at = { i: s.start };
  const n = readU32(bytes, at);
  return Array.from({ length: n }, () => readU32(bytes, at));
}

function vecCount(bytes, s) {
  return s ? readU32(bytes, { i: s.start }) : 0;
}

// ------------------------------------------------------------------ rewriting one function body
const OP = { globalGet: 0x23, globalSet: 0x24, localGet: 0x20, localSet: 0x21, i32Const: 0x41 };

/**
 * At a function's start and after `loop bt`: work -= 1; when it runs below zero and nothing is
 * poked yet, the interrupt counter's value is kept in `poked` and the counter set to 1, so that the
 * interpreter polls at its next step. Once only: QuickJS resets the counter before it calls the
 * handler, and code on the way to the handler must not set it to 1 again (steps.mjs reads a counter
 * of 1 with something poked as a poll that has not happened). (Failing the native operation under
 * way as well, by setting the runtime's memory limit to 0, was tried: QuickJS does not survive an
 * allocation failing everywhere, e.g. while it builds a stack overflow's backtrace.)
 */
const meterLoop = (g) => [
  ...[OP.globalGet, ...u32(g.work), OP.i32Const, 1, 0x6b, OP.globalSet, ...u32(g.work)],
  ...[OP.globalGet, ...u32(g.work), OP.i32Const, 0, 0x48, 0x04, 0x40],
  ...[OP.globalGet, ...u32(g.poked), 0x45, 0x04, 0x40],
  ...[OP.globalGet, ...u32(g.poke), 0x28, 0x02, 0x00, OP.globalSet, ...u32(g.poked)],
  ...[OP.globalGet, ...u32(g.poke), OP.i32Const, 1, 0x36, 0x02, 0x00, 0x0b, 0x0b],
];

/** Before memory.copy or memory.fill, whose length is on top of the stack: work -= length >> log2. */
const meterBytes = (work, tmp) => [
  ...[OP.localSet, ...u32(tmp), OP.localGet, ...u32(tmp)],
  ...[OP.globalGet, ...u32(work), OP.localGet, ...u32(tmp), OP.i32Const, WORK_PER_BYTE_LOG2, 0x76, 0x6b],
  ...[OP.globalSet, ...u32(work)],
];

/** Immediates of the 0xFC-prefixed instructions, by sub-opcode: [u32 count, trailing bytes]. */
const FC_IMM = [
  [0, 0],
  [0, 0],
  [0, 0],
  [0, 0],
  [0, 0],
  [0, 0],
  [0, 0],
  [0, 0],
  [1, 1],
  [1, 0],
  [0, 2],
  [0, 1],
  [2, 0],
  [1, 0],
  [2, 0],
  [1, 0],
  [1, 0],
  [1, 0],
];

/** One function body, rewritten. `params` is the number of the function's parameters (for the index of the local it may add). */
function rewriteBody(b, start, end, params, g) {
  const at = { i: start };
  const groups = readU32(b, at);
  let locals = 0;
  const localsStart = at.i;
  for (let k = 0; k < groups; k++) {
    locals += readU32(b, at);
    at.i++;
  }
  const localsEnd = at.i;
  const tmp = params + locals;
  // Each call of the function is a unit too (the first part), as each loop iteration is.
  const parts = [b.subarray(localsEnd, localsEnd), meterLoop(g)];
  let from = at.i;
  let bulk = false;
  while (at.i < end) {
    const op = b[at.i++];
    if (op === 0x02 || op === 0x03 || op === 0x04) {
      skipLeb(b, at);
      if (op === 0x03) {
        parts.push(b.subarray(from, at.i), meterLoop(g));
        from = at.i;
      }
    } else if (op === 0x0c || op === 0x0d || op === 0x10 || (op >= 0x20 && op <= 0x26) || op === 0xd2) skipLeb(b, at);
    else if (op === 0x0e) {
      const n = readU32(b, at);
      for (let k = 0; k <= n; k++) skipLeb(b, at);
    } else if (op === 0x11) {
      skipLeb(b, at);
      skipLeb(b, at);
    } else if (op === 0x1c) {
      skipBytes(b, at);
    } else if (op >= 0x28 && op <= 0x3e) {
      skipLeb(b, at);
      skipLeb(b, at);
    } else if (op === 0x3f || op === 0x40 || op === 0xd0) at.i++;
    else if (op === 0x41 || op === 0x42) skipLeb(b, at);
    else if (op === 0x43) at.i += 4;
    else if (op === 0x44) at.i += 8;
    else if (op === 0xfc) {
      const opStart = at.i - 1;
      const sub = readU32(b, at);
      const imm = FC_IMM[sub];
      if (!imm) throw new Error(`unknown instruction 0xfc ${sub}`);
      for (let k = 0; k < imm[0]; k++) skipLeb(b, at);
      at.i += imm[1];
      if (sub === 10 || sub === 11) {
        parts.push(b.subarray(from, opStart), meterBytes(g.work, tmp));
        from = opStart;
        bulk = true;
      }
    } else if (
      op === 0x00 ||
      op === 0x01 ||
      op === 0x05 ||
      op === 0x0b ||
      op === 0x0f ||
      op === 0x1a ||
      op === 0x1b ||
      (op >= 0x45 && op <= 0xc4) ||
      op === 0xd1
    ) {
      // no immediates
    } else throw new Error(`unknown instruction 0x${op.toString(16)} at ${at.i - 1}`);
  }
  parts.push(b.subarray(from, end));
  // An added i32 local for the length of a bulk operation.
  const head = bulk
    ? [Uint8Array.from(u32(groups + 1)), b.subarray(localsStart, localsEnd), Uint8Array.of(1, 0x7f)]
    : [b.subarray(start, localsEnd)];
  return Buffer.concat([...head, ...parts.map((p) => (p instanceof Uint8Array ? p : Uint8Array.from(p)))]);
}

// ------------------------------------------------------------------ the whole module
function functionBodies(bytes, s) {
  const at = { i: s.start };
  const n = readU32(bytes, at);
  return Array.from({ length: n }, () => {
    const size = readU32(bytes, at);
    const start = at.i;
    at.i += size;
    return { start, end: at.i };
  });
}

/**
 * The interpreter's own function (JS_CallInternal: by far the largest in QuickJS, over twice the
 * next), whose loops are not metered: its dispatch loop runs once per bytecode, which the step
 * counter already bounds, so plain code spends almost no native work and its budget stays exactly
 * its steps. -1 when no function stands out that way (another build: everything is metered).
 */
function interpreterIndex(bodies) {
  const sizes = bodies.map((f) => f.end - f.start);
  const order = sizes.map((_, k) => k).sort((a, b) => sizes[b] - sizes[a]);
  return sizes[order[0]] >= 1.5 * sizes[order[1]] ? order[0] : -1;
}

/**
 * The module with native work metered: three more i32 globals, exported as `cogen_work` (the units
 * left), `cogen_poke` (the address of the interrupt counter to set to 1 when they run out) and
 * `cogen_poked` (the counter's value when it was set, 0 if it was not), and every function, loop
 * and bulk memory operation rewritten as above.
 */
export function meterModule(bytes) {
  const ss = sections(bytes);
  const find = (id) => ss.find((s) => s.id === id);
  const imp = find(SECTION.import) ? importCounts(bytes, find(SECTION.import)) : { funcs: 0, globals: 0 };
  const params = typeParams(bytes, find(SECTION.type));
  const ftypes = functionTypes(bytes, find(SECTION.function));
  const globalSec = find(SECTION.global);
  const work = imp.globals + vecCount(bytes, globalSec);
  const g = { work, poke: work + 1, poked: work + 2 };
  const newGlobal = (init) => [0x7f, 1, OP.i32Const, ...s32(init), 0x0b];
  const name = (t) => [...u32(t.length), ...Buffer.from(t)];
  const out = [bytes.subarray(0, 8)];
  const put = (id, parts) => {
    const size = parts.reduce((a, p) => a + p.length, 0);
    out.push(Uint8Array.of(id, ...u32(size)), ...parts.map((p) => (p instanceof Uint8Array ? p : Uint8Array.from(p))));
  };
  for (const s of ss) {
    const at = { i: s.start };
    if (s.id === SECTION.global) {
      const n = readU32(bytes, at);
      put(s.id, [u32(n + 3), bytes.subarray(at.i, s.end), newGlobal(0x7fffffff), newGlobal(0), newGlobal(0)]);
    } else if (s.id === SECTION.export) {
      const n = readU32(bytes, at);
      const more = ['work', 'poke', 'poked'].flatMap((k) => [...name(`cogen_${k}`), 3, ...u32(g[k])]);
      put(s.id, [u32(n + 3), bytes.subarray(at.i, s.end), more]);
    } else if (s.id === SECTION.code) {
      const bodies = functionBodies(bytes, s);
      const skip = interpreterIndex(bodies);
      const parts = [u32(bodies.length)];
      bodies.forEach(({ start, end }, k) => {
        const fb = k !== skip ? rewriteBody(bytes, start, end, params[ftypes[k]], g) : bytes.subarray(start, end);
        parts.push(u32(fb.length), fb);
      });
      put(s.id, parts);
    } else put(s.id, [bytes.subarray(s.start, s.end)]);
  }
  if (!globalSec) throw new Error('the module has no global section');
  return Buffer.concat(out);
}
