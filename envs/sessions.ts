// Episodes held for a server: an episode is started by a request (kind, family, level, seed) and
// stepped by id until it ends, when its trajectory is handed to `record` (the run store) and it is
// forgotten. At most `maxEpisodes` are held; past that the oldest is dropped (an abandoned episode
// is never recorded).
import { randomUUID } from 'node:crypto';
import { createRng } from '../core/rng.js';
import type { Sandbox } from '../sandbox/index.js';
import { Env } from './env.js';
import { generateEnv } from './generate.js';
import {
  ENV_KINDS,
  type EnvAction,
  type EnvKind,
  type EnvObservation,
  type EnvSpec,
  type StepResult,
  type Trajectory,
} from './types.js';

export class EnvSessionError extends Error {
  constructor(
    message: string,
    readonly code: 'unknown-episode' | 'bad-request',
  ) {
    super(message);
  }
}

export interface EnvRequest {
  kind: EnvKind;
  /** Default: one of `families`, picked by the seed. */
  family?: string;
  level?: number;
  /** Picks the environment (with kind, family, level) and what its first prompt shows. Default: random. */
  seed?: number;
  episodeId?: string;
}

export interface StartedEpisode {
  episodeId: string;
  spec: Pick<EnvSpec, 'id' | 'kind' | 'family' | 'level' | 'skills' | 'budgets'>;
  seed: number;
  observation: EnvObservation;
}

export interface EnvSessionOptions {
  /** The families an episode may be drawn from when the request names none. */
  families: readonly string[];
  maxEpisodes: number;
  /** Called once per finished episode; a step that ends one answers once it is recorded. */
  record?: (spec: EnvSpec, trajectory: Trajectory) => void | Promise<void>;
}

/** The rng a requested environment is drawn with: the same request (with its seed) makes the same environment. */
export const requestRng = (kind: EnvKind, family: string, level: number, seed: number) =>
  createRng(`env/${kind}/${family}/${level}/${seed}`);

export class EnvSessions {
  private readonly episodes = new Map<string, Env>();

  constructor(
    private readonly sandbox: Sandbox,
    private readonly opts: EnvSessionOptions,
  ) {}

  get open(): number {
    return this.episodes.size;
  }

  async start(req: EnvRequest): Promise<StartedEpisode> {
    if (!ENV_KINDS.includes(req.kind))
      throw new EnvSessionError(
        `unknown environment kind '${String(req.kind)}'; known kinds: ${ENV_KINDS.join(', ')}`,
        'bad-request',
      );
    const seed = req.seed ?? Math.floor(Math.random() * 2 ** 31);
    const family = req.family ?? createRng(`family/${seed}`).pick(this.opts.families);
    const level = req.level ?? 0;
    let spec: EnvSpec;
    try {
      spec = await generateEnv(this.sandbox, {
        kind: req.kind,
        family,
        level,
        rng: requestRng(req.kind, family, level, seed),
      });
    } catch (e) {
      throw new EnvSessionError((e as Error).message.split('\n')[0]!, 'bad-request');
    }
    const env = new Env(spec, this.sandbox);
    const observation = env.reset(seed);
    const episodeId = req.episodeId ?? randomUUID();
    this.episodes.delete(episodeId);
    this.episodes.set(episodeId, env);
    while (this.episodes.size > this.opts.maxEpisodes) this.episodes.delete(this.episodes.keys().next().value!);
    const { id, kind, skills, budgets } = spec;
    return {
      episodeId,
      spec: { id, kind, family: spec.family, level: spec.level, skills, budgets },
      seed,
      observation,
    };
  }

  async step(episodeId: string, action: EnvAction): Promise<StepResult> {
    const env = this.episodes.get(episodeId);
    if (!env)
      throw new EnvSessionError(
        `no open environment episode '${episodeId}' (it ended, was never started, or was dropped)`,
        'unknown-episode',
      );
    const r = await env.step(action);
    if (r.done) {
      this.episodes.delete(episodeId);
      await this.opts.record?.(env.spec, env.trajectory());
    }
    return r;
  }

  /** The episode so far, while it is open. */
  trajectory(episodeId: string): Trajectory | undefined {
    return this.episodes.get(episodeId)?.trajectory();
  }
}
