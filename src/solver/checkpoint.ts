// A solver checkpoint on disk, one directory: model.safetensors (the weights; plain safetensors, which
// PyTorch reads), optimizer.safetensors (AdamW's moments, m.* and v.*), reference.safetensors (the KL
// reference, when one is kept), replay.json (self-imitation's kept answers), and state.json, written
// last, so that a directory without it is an incomplete checkpoint.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type * as tf from '@tensorflow/tfjs-core';
import { setVariable, type ModelConfig, type Params } from './params.js';
import type { AdamW } from './optim.js';
import { AnswerReplay, type KeptJson } from './self-imitation.js';
import { decodeSafetensors, encodeSafetensors, writeAtomic, type NamedTensor } from './safetensors.js';
import { VIEW } from './tokenizer.js';

const CHECKPOINT_FORMAT = 'cogen-solver/1';

export type Weights = Map<string, NamedTensor>;

/** What a checkpoint holds of a policy besides its state.json. */
export interface PolicyParts {
  params: Params;
  ref: Params | null;
  opt: AdamW;
  replay: AnswerReplay | null;
}

/** The fields of state.json a load reads. */
interface StateJson {
  format: string;
  /** The solver view it was trained under (tokenizer.ts); absent before views had names: characters. */
  view?: string;
  model: ModelConfig;
  optimizer: { step: number };
  rng: [number, number, number, number];
}

/** Every variable's values, by name. */
export async function readWeights(p: Params): Promise<Weights> {
  const out: Weights = new Map();
  for (const [name, v] of p) out.set(name, { shape: v.shape.slice(), data: (await v.data()) as Float32Array });
  return out;
}

/** Writes the parts, then state.json: `meta` after the format (config, model, optimizer, rng, backend). */
export async function writeCheckpoint(dir: string, parts: PolicyParts, meta: Record<string, unknown>): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await writeAtomic(
    path.join(dir, 'model.safetensors'),
    encodeSafetensors(await readWeights(parts.params), { format: 'pt', producer: 'cogen' }),
  );
  const moments: Weights = new Map();
  for (const [n, t] of parts.opt.m)
    moments.set(`m.${n}`, { shape: t.shape.slice(), data: (await t.data()) as Float32Array });
  for (const [n, t] of parts.opt.v)
    moments.set(`v.${n}`, { shape: t.shape.slice(), data: (await t.data()) as Float32Array });
  await writeAtomic(path.join(dir, 'optimizer.safetensors'), encodeSafetensors(moments));
  if (parts.ref)
    await writeAtomic(path.join(dir, 'reference.safetensors'), encodeSafetensors(await readWeights(parts.ref)));
  if (parts.replay) await writeAtomic(path.join(dir, 'replay.json'), JSON.stringify(parts.replay));
  await writeAtomic(
    path.join(dir, 'state.json'),
    JSON.stringify({ format: CHECKPOINT_FORMAT, view: VIEW, ...meta }, null, 2),
  );
}

/** A checkpoint's state.json, checked against the policy's model shape. */
async function readState(dir: string, mc: ModelConfig): Promise<StateJson> {
  const state = JSON.parse(await fs.readFile(path.join(dir, 'state.json'), 'utf8')) as StateJson;
  if (state.format !== CHECKPOINT_FORMAT)
    throw new Error(`checkpoint format ${state.format}, expected ${CHECKPOINT_FORMAT}`);
  const view = state.view ?? 'chars';
  if (view !== VIEW) {
    throw new Error(
      `checkpoint ${dir} was trained under the solver view '${view}' and this solver reads '${VIEW}' (other tokens and positions): its weights do not apply; start from random weights or a checkpoint of this view`,
    );
  }
  for (const k of Object.keys(mc) as (keyof ModelConfig)[]) {
    if (state.model[k] !== mc[k])
      throw new Error(`checkpoint model.${k} = ${state.model[k]}, this policy has ${mc[k]}`);
  }
  return state;
}

const readTensors = async (file: string): Promise<Weights> => decodeSafetensors(await fs.readFile(file)).tensors;

/** Overwrites every variable of `into` from a checkpoint's tensors (names prefixed by `prefix` there). */
function assignAll(into: Map<string, tf.Variable>, from: Weights, prefix = ''): void {
  for (const [n, v] of into) {
    const t = from.get(prefix + n);
    if (!t) throw new Error(`checkpoint lacks ${prefix + n}`);
    setVariable(v, t.data);
  }
}

/** Loads everything into the parts (the optimiser's step too); returns the sampling rng's state and the kept answers. */
export async function loadCheckpoint(
  dir: string,
  parts: PolicyParts,
  mc: ModelConfig,
): Promise<{ rng: StateJson['rng']; replay: AnswerReplay | null }> {
  const state = await readState(dir, mc);
  assignAll(parts.params, await readTensors(path.join(dir, 'model.safetensors')));
  const mom = await readTensors(path.join(dir, 'optimizer.safetensors'));
  assignAll(parts.opt.m, mom, 'm.');
  assignAll(parts.opt.v, mom, 'v.');
  parts.opt.step = state.optimizer.step;
  if (parts.ref) {
    // a checkpoint written without a reference: the weights are the reference
    const refFile = path.join(dir, 'reference.safetensors');
    assignAll(
      parts.ref,
      await readTensors((await fs.stat(refFile).catch(() => null)) ? refFile : path.join(dir, 'model.safetensors')),
    );
  }
  // a checkpoint written without self-imitation has no kept answers: start with none
  const replay = parts.replay
    ? AnswerReplay.fromJSON(
        JSON.parse(await fs.readFile(path.join(dir, 'replay.json'), 'utf8').catch(() => '[]')) as [string, KeptJson][],
      )
    : null;
  return { rng: state.rng, replay };
}

/** A checkpoint's model weights into the parameters, and into the KL reference where one is kept (solver.init). */
export async function loadModelWeights(dir: string, parts: PolicyParts, mc: ModelConfig): Promise<void> {
  await readState(dir, mc);
  const weights = await readTensors(path.join(dir, 'model.safetensors'));
  assignAll(parts.params, weights);
  if (parts.ref) assignAll(parts.ref, weights);
}
