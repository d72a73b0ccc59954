// The model's parameters: their names and shapes (GPT-2's, Conv1D weights [in, out]), nanoGPT's
// initialisation, and the tfjs variables that hold them (model.ts reads them by name).
import * as tf from '@tensorflow/tfjs-core';
import type { Rng } from '../../core/rng.js';

export interface ModelConfig {
  vocabSize: number;
  dModel: number;
  layers: number;
  heads: number;
  mlpRatio: number;
  /** Rows of the position table. */
  maxPositions: number;
}

export type Params = Map<string, tf.Variable>;

/** Parameter names and shapes, in a fixed order. */
export function paramShapes(c: ModelConfig): [string, number[]][] {
  const d = c.dModel;
  const f = d * c.mlpRatio;
  const out: [string, number[]][] = [
    ['wte.weight', [c.vocabSize, d]],
    ['wpe.weight', [c.maxPositions, d]],
  ];
  for (let i = 0; i < c.layers; i++) {
    const h = `h.${i}.`;
    out.push(
      [h + 'ln_1.weight', [d]],
      [h + 'ln_1.bias', [d]],
      [h + 'attn.c_attn.weight', [d, 3 * d]],
      [h + 'attn.c_attn.bias', [3 * d]],
      [h + 'attn.c_proj.weight', [d, d]],
      [h + 'attn.c_proj.bias', [d]],
      [h + 'ln_2.weight', [d]],
      [h + 'ln_2.bias', [d]],
      [h + 'mlp.c_fc.weight', [d, f]],
      [h + 'mlp.c_fc.bias', [f]],
      [h + 'mlp.c_proj.weight', [f, d]],
      [h + 'mlp.c_proj.bias', [d]],
    );
  }
  out.push(['ln_f.weight', [d]], ['ln_f.bias', [d]]);
  return out;
}

/** nanoGPT init: N(0, 0.02) weights and embeddings, N(0, 0.02/√(2L)) residual projections, zero biases, unit LayerNorm gains. */
export function initWeights(c: ModelConfig, rng: Rng): Map<string, { shape: number[]; data: Float32Array }> {
  const gauss = (): number => {
    const u = 1 - rng.next();
    const v = rng.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, shape] of paramShapes(c)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith('.bias')) {
      // zeros
    } else if (name.includes('ln_')) {
      data.fill(1);
    } else {
      const std = name.endsWith('c_proj.weight') ? 0.02 / Math.sqrt(2 * c.layers) : 0.02;
      for (let i = 0; i < data.length; i++) data[i] = std * gauss();
    }
    out.set(name, { shape, data });
  }
  return out;
}

export function makeParams(weights: Map<string, { shape: number[]; data: Float32Array }>, trainable = true): Params {
  const p: Params = new Map();
  for (const [name, w] of weights)
    p.set(name, tf.variable(tf.tensor(w.data, w.shape, 'float32'), trainable, undefined, 'float32'));
  return p;
}

/** Overwrites a variable with data of its shape. (assign keeps the new tensor's data alive, so the tensor made for it is disposed here: each call would leak one otherwise.) */
export function setVariable(v: tf.Variable, data: Float32Array): void {
  const t = tf.tensor(data, v.shape, 'float32');
  v.assign(t);
  t.dispose();
}
/** The variable of parameter `name`. */
export function param(p: Params, name: string): tf.Variable {
  const v = p.get(name);
  if (!v) throw new Error(`missing parameter ${name}`);
  return v;
}
