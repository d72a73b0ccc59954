import { describe, expect, it } from 'vitest';
import { ConfigError, loadPreset, parseConfig, RETIRED_FIELDS } from '../src/run/config.js';

const base = { steps: 10, families: ['arith'] };

describe('retired and unknown config fields', () => {
  it('refuses a retired field in a new preset, naming it and why', () => {
    const bad = { ...base, solver: { optim: { lr: 0.001, totalSteps: 500 } } };
    expect(() => parseConfig(bad, 'x.yaml')).toThrow(ConfigError);
    expect(() => parseConfig(bad, 'x.yaml')).toThrow(
      /solver\.optim\.totalSteps is retired \(the learning-rate schedule always spans the run's `steps`\); remove it/,
    );
  });

  it("reads a run store's config that still has one, with a note, and keeps the rest", () => {
    const notes: string[] = [];
    const stored = { ...base, solver: { optim: { lr: 0.002, totalSteps: 5000 } } };
    const config = parseConfig(stored, 'of run r1', { stored: true, note: (l) => notes.push(l) });
    expect(config.solver.optim.lr).toBe(0.002);
    expect('totalSteps' in config.solver.optim).toBe(false);
    expect(notes).toEqual([
      "note: the config of run r1 sets solver.optim.totalSteps, which is retired (the learning-rate schedule always spans the run's `steps`); it is ignored",
    ]);
    expect(stored.solver.optim.totalSteps).toBe(5000); // the caller's object is not edited
  });

  it('drops each retired field from a stored config with one note', () => {
    for (const { path } of RETIRED_FIELDS) {
      const nested = path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), 1) as Record<string, unknown>;
      const notes: string[] = [];
      expect(() =>
        parseConfig({ ...base, ...nested }, 'p', { stored: true, note: (l) => notes.push(l) }),
      ).not.toThrow();
      expect(notes).toHaveLength(1);
    }
  });

  it('refuses a misspelt solver field instead of dropping it', () => {
    expect(() => parseConfig({ ...base, solver: { optim: { lrr: 0.01 } } }, 'p')).toThrow(/solver\.optim: .*lrr/);
  });

  it('every shipped preset parses (none sets a retired field)', () => {
    for (const name of ['default', 'smoke', 'learn', 'replay', 'gated-ladder'])
      expect(loadPreset(name).steps).toBeGreaterThan(0);
  });
});
