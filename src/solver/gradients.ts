// Gradients for the kernels the model and the losses use.
//
// @tensorflow/tfjs-core's CommonJS build (what Node loads) ships no gradient definitions; the union
// package @tensorflow/tfjs registers them, but only its ESM sources have them and we depend on
// tfjs-core alone. So this file registers the few we need, with the textbook formulas. Kernels that
// already have a gradient (e.g. when @tensorflow/tfjs or tfjs-node is loaded) are left alone.
import * as tf from '@tensorflow/tfjs-core';
import { fusedOp } from './fused.js';

type Attrs = Record<string, unknown>;
type GradFn = (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: Attrs) => Record<string, () => tf.Tensor>;

function axes(axis: unknown, rank: number): number[] {
  const a = axis == null ? [...Array(rank).keys()] : Array.isArray(axis) ? (axis as number[]) : [axis as number];
  return a.map((x) => (x < 0 ? x + rank : x));
}

/** Sums dy over the axes that were broadcast to reach dy's shape from `shape`. */
function unbroadcast(dy: tf.Tensor, shape: number[]): tf.Tensor {
  if (dy.shape.length === shape.length && dy.shape.every((d, i) => d === shape[i])) return dy;
  const lead = dy.rank - shape.length;
  const red: number[] = [];
  for (let i = 0; i < dy.rank; i++) {
    if (i < lead || (shape[i - lead] === 1 && dy.shape[i] !== 1)) red.push(i);
  }
  return tf.reshape(red.length ? tf.sum(dy, red) : dy, shape);
}

/** dy of a reduction back to the input shape. */
function expandReduced(dy: tf.Tensor, xShape: number[], axis: unknown): tf.Tensor {
  const ax = axes(axis, xShape.length);
  const kept = xShape.map((d, i) => (ax.includes(i) ? 1 : d));
  return tf.mul(tf.reshape(dy, kept), tf.ones(xShape));
}

// tfjs-wasm's own matMul sends only flag-free 2-D products to XNNPACK, so rank-2 transposes are done
// explicitly. backend.ts turns this off when accel/'s SIMD matMul (transposes for free) is in use;
// benchmarks turn it off for the naïve baseline (flags, as tfjs's own gradient does).
let explicitTranspose = true;
/** Returns the previous setting. */
export function setExplicitTranspose(on: boolean): boolean {
  const was = explicitTranspose;
  explicitTranspose = on;
  return was;
}

/** matMul with transposes done explicitly for rank-2 operands when explicitTranspose is on. */
export function matMulFast(a: tf.Tensor, b: tf.Tensor, tA = false, tB = false): tf.Tensor {
  if (!explicitTranspose || a.rank !== 2 || b.rank !== 2 || (!tA && !tB)) return tf.matMul(a, b, tA, tB);
  return tf.matMul(tA ? tf.transpose(a) : a, tB ? tf.transpose(b) : b);
}

const grads: Record<
  string,
  { inputsToSave?: string[]; saveAllInputs?: boolean; outputsToSave?: boolean[]; fn: GradFn }
> = {
  Add: {
    inputsToSave: ['a', 'b'],
    fn: (dy, [a, b]) => ({
      a: () => unbroadcast(dy as tf.Tensor, a!.shape),
      b: () => unbroadcast(dy as tf.Tensor, b!.shape),
    }),
  },
  Sub: {
    inputsToSave: ['a', 'b'],
    fn: (dy, [a, b]) => ({
      a: () => unbroadcast(dy as tf.Tensor, a!.shape),
      b: () => unbroadcast(tf.neg(dy as tf.Tensor), b!.shape),
    }),
  },
  Multiply: {
    inputsToSave: ['a', 'b'],
    fn: (dy, [a, b]) => ({
      a: () => unbroadcast(tf.mul(dy as tf.Tensor, b!), a!.shape),
      b: () => unbroadcast(tf.mul(dy as tf.Tensor, a!), b!.shape),
    }),
  },
  RealDiv: {
    inputsToSave: ['a', 'b'],
    fn: (dy, [a, b]) => ({
      a: () => unbroadcast(tf.div(dy as tf.Tensor, b!), a!.shape),
      b: () => unbroadcast(tf.neg(tf.div(tf.mul(dy as tf.Tensor, a!), tf.square(b!))), b!.shape),
    }),
  },
  Maximum: {
    inputsToSave: ['a', 'b'],
    fn: (dy, [a, b]) => ({
      a: () => unbroadcast(tf.mul(dy as tf.Tensor, tf.cast(tf.greaterEqual(a!, b!), 'float32')), a!.shape),
      b: () => unbroadcast(tf.mul(dy as tf.Tensor, tf.cast(tf.less(a!, b!), 'float32')), b!.shape),
    }),
  },
  Minimum: {
    inputsToSave: ['a', 'b'],
    fn: (dy, [a, b]) => ({
      a: () => unbroadcast(tf.mul(dy as tf.Tensor, tf.cast(tf.lessEqual(a!, b!), 'float32')), a!.shape),
      b: () => unbroadcast(tf.mul(dy as tf.Tensor, tf.cast(tf.greater(a!, b!), 'float32')), b!.shape),
    }),
  },
  Neg: { fn: (dy) => ({ x: () => tf.neg(dy as tf.Tensor) }) },
  Exp: { outputsToSave: [true], fn: (dy, [y]) => ({ x: () => tf.mul(dy as tf.Tensor, y!) }) },
  Square: { inputsToSave: ['x'], fn: (dy, [x]) => ({ x: () => tf.mul(dy as tf.Tensor, tf.mul(x!, 2)) }) },
  // y = x^(-1/2): dy/dx = -y³/2
  Rsqrt: {
    outputsToSave: [true],
    fn: (dy, [y]) => ({ x: () => tf.mul(dy as tf.Tensor, tf.mul(tf.mul(tf.square(y!), y!), -0.5)) }),
  },
  Sigmoid: {
    outputsToSave: [true],
    fn: (dy, [y]) => ({ x: () => tf.mul(dy as tf.Tensor, tf.mul(y!, tf.sub(1, y!))) }),
  },
  Tanh: { outputsToSave: [true], fn: (dy, [y]) => ({ x: () => tf.mul(dy as tf.Tensor, tf.sub(1, tf.square(y!))) }) },
  Sign: { fn: (dy) => ({ x: () => tf.zerosLike(dy as tf.Tensor) }) },
  Cast: { fn: (dy) => ({ x: () => (dy as tf.Tensor).clone() }) },
  Identity: { fn: (dy) => ({ x: () => (dy as tf.Tensor).clone() }) },
  ClipByValue: {
    inputsToSave: ['x'],
    fn: (dy, [x], at) => ({
      x: () =>
        tf.mul(
          dy as tf.Tensor,
          tf.cast(
            tf.logicalAnd(tf.greaterEqual(x!, at.clipValueMin as number), tf.lessEqual(x!, at.clipValueMax as number)),
            'float32',
          ),
        ),
    }),
  },
  Reshape: { inputsToSave: ['x'], fn: (dy, [x]) => ({ x: () => tf.reshape(dy as tf.Tensor, x!.shape) }) },
  Transpose: {
    fn: (dy, _s, at) => {
      const perm = at.perm as number[];
      const inv = new Array<number>(perm.length);
      perm.forEach((p, i) => {
        inv[p] = i;
      });
      return { x: () => tf.transpose(dy as tf.Tensor, inv) };
    },
  },
  Slice: {
    inputsToSave: ['x'],
    fn: (dy, [x], at) => {
      const r = x!.rank;
      const begin = Array.isArray(at.begin) ? (at.begin as number[]) : new Array<number>(r).fill(at.begin as number);
      const d = dy as tf.Tensor;
      return {
        x: () =>
          tf.pad(
            d,
            begin.map((b, i) => [b, x!.shape[i]! - b - d.shape[i]!] as [number, number]),
          ),
      };
    },
  },
  Concat: {
    saveAllInputs: true,
    fn: (dy, saved, at) => {
      const axis = ((at.axis as number) + saved[0]!.rank) % saved[0]!.rank;
      const parts = tf.split(
        dy as tf.Tensor,
        saved.map((t) => t.shape[axis]!),
        axis,
      );
      return Object.fromEntries(parts.map((p, i) => [String(i), () => p]));
    },
  },
  SplitV: { fn: (dy, _s, at) => ({ x: () => tf.concat(dy as tf.Tensor[], at.axis as number) }) },
  Sum: { inputsToSave: ['x'], fn: (dy, [x], at) => ({ x: () => expandReduced(dy as tf.Tensor, x!.shape, at.axis) }) },
  Mean: {
    inputsToSave: ['x'],
    fn: (dy, [x], at) => {
      const n = axes(at.axis, x!.rank).reduce((p, i) => p * x!.shape[i]!, 1);
      return { x: () => tf.div(expandReduced(dy as tf.Tensor, x!.shape, at.axis), n) };
    },
  },
  Softmax: {
    outputsToSave: [true],
    fn: (dy, [y], at) => {
      const dim = (at.dim as number) ?? -1;
      const d = dy as tf.Tensor;
      const fused = dim === -1 || dim === y!.rank - 1 ? fusedOp('softmaxGrad') : null; // one pass (fused.ts)
      if (fused) return { logits: () => fused(y!, d) };
      return { logits: () => tf.mul(y!, tf.sub(d, tf.sum(tf.mul(d, y!), dim, true))) };
    },
  },
  // Without accel/'s SIMD matMul, rank-2 operands take explicit transposes: tfjs-wasm runs
  // a 2-D matMul without transpose flags through XNNPACK and one with flags through a ~10x slower loop.
  BatchMatMul: {
    inputsToSave: ['a', 'b'],
    fn: (dy, [a, b], at) => {
      const d = dy as tf.Tensor;
      const tA = at.transposeA as boolean;
      const tB = at.transposeB as boolean;
      const mm = (x: tf.Tensor, y: tf.Tensor, tx: boolean, ty: boolean): tf.Tensor => matMulFast(x, y, tx, ty);
      let da: () => tf.Tensor;
      let db: () => tf.Tensor;
      if (!tA && !tB) {
        da = () => mm(d, b!, false, true);
        db = () => mm(a!, d, true, false);
      } else if (!tA && tB) {
        da = () => mm(d, b!, false, false);
        db = () => mm(d, a!, true, false);
      } else if (tA && !tB) {
        da = () => mm(b!, d, false, true);
        db = () => mm(a!, d, false, false);
      } else {
        da = () => mm(b!, d, true, true);
        db = () => mm(d, a!, true, true);
      }
      return { a: () => unbroadcast(da(), a!.shape), b: () => unbroadcast(db(), b!.shape) };
    },
  },
};

let done = false;
export function registerGradients(): void {
  if (done) return;
  done = true;
  for (const [kernelName, g] of Object.entries(grads)) {
    if (tf.getGradient(kernelName)) continue;
    tf.registerGradient({
      kernelName,
      inputsToSave: g.inputsToSave,
      saveAllInputs: g.saveAllInputs,
      outputsToSave: g.outputsToSave,
      gradFunc: g.fn as unknown as tf.GradConfig['gradFunc'],
    });
  }
}
registerGradients();
