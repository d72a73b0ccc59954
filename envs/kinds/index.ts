// The environment kinds, one file each, behind a registry.
import type { EnvKind } from '../types.js';
import type { KindImpl } from './common.js';
import { probe } from './probe.js';
import { repair } from './repair.js';
import { search } from './search.js';

export const KINDS: Record<EnvKind, KindImpl<never>> = { probe, repair, search } as unknown as Record<
  EnvKind,
  KindImpl<never>
>;
