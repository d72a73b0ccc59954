import { describe, expect, it } from 'vitest';
import { createMasteryTracker, masteryConfigSchema } from '../curricula/index.js';
import { masterySummary } from '../src/run/testing.js';

const sets = {
  learnAt: 0.8,
  margin: 0.3,
  minProbes: 17,
  skills: {
    a: { probes: 17, baseline: 0.5, masterable: true },
    b: { probes: 17, baseline: 0.4, masterable: true },
    c: { probes: 2, baseline: 1, masterable: false },
  },
};
const probe = (accuracy: number, baseline: number) => ({ accuracy, baseline, probes: 17 });

describe('forgetting in the closing summary', () => {
  it('counts skills ever learned, and those not mastered at the end as forgotten with their share', () => {
    const m = createMasteryTracker(masteryConfigSchema.parse({}));
    m.observe(10, { a: probe(0.9, 0.5), b: probe(0.85, 0.4) });
    m.observe(20, { a: probe(0.3, 0.5), b: probe(0.9, 0.4) });
    m.observe(30, { a: probe(0.9, 0.5) }); // a learned again: not forgotten at the end
    m.observe(40, { b: probe(0.1, 0.4) }); // b forgotten
    const s = masterySummary(m.mastered(), m.state(), sets);
    expect(s.skillsEverLearned).toEqual(['a', 'b']);
    expect(s.mastery).toEqual([{ skillId: 'a', accuracy: 0.9, baseline: 0.5 }]);
    expect(s.forgotten).toEqual({ skills: ['b'], share: 0.5 });
    expect(s.skillsMasterable).toBe(2);
  });

  it('reports no forgetting when nothing was ever learned', () => {
    const m = createMasteryTracker(masteryConfigSchema.parse({}));
    m.observe(10, { a: probe(0.6, 0.5) });
    expect(masterySummary(m.mastered(), m.state(), sets)).toMatchObject({
      skillsEverLearned: [],
      forgotten: { skills: [], share: 0 },
    });
  });
});
