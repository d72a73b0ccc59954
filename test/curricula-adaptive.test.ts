// Simulated learners: adaptive controllers should spend their picks where the learner's success rate
// is strictly between 0 and 1 (where GRPO has a gradient), and so learn faster than uniform.
import { describe, expect, it } from 'vitest';
import { createController, curriculumConfigSchema, type ControllerName } from '../curricula/index.js';
import { createRng } from '../core/rng.js';
import { simArms, simulate } from '../curricula/testing.js';

const opts = { families: 3, levels: 6, rate: 0.05, group: 8 };
const run = (controller: ControllerName) => {
  const rs = [1, 2, 3].map((seed) =>
    simulate(
      createController(curriculumConfigSchema.parse({ controller }), simArms(opts.families, opts.levels)),
      opts,
      150,
      8,
      createRng(seed),
    ),
  );
  return {
    frontier: rs.reduce((a, r) => a + r.frontierFraction, 0) / rs.length,
    skill: rs.reduce((a, r) => a + r.meanSkill, 0) / rs.length,
  };
};

describe('adaptive controllers on a simulated learner', () => {
  const uniform = run('uniform');
  it.each(['learnability', 'bandit', 'ladder', 'progress', 'replay'] as const)(
    '%s concentrates picks on 0 < p < 1 arms',
    (name) => {
      const r = run(name);
      expect(r.frontier).toBeGreaterThan(uniform.frontier * 1.2);
      expect(r.skill).toBeGreaterThan(uniform.skill);
    },
  );
  it('learnability puts most picks on the frontier', () => {
    expect(run('learnability').frontier).toBeGreaterThan(0.6);
  });
});
