// One probe report applied to a served run's state by the run's writer (committer.ts): the round's
// per-skill accuracies move the mastery tracker, and its learned / forgotten events are recorded.
// The round's level sets are the probes' own at the tabled levels (a served run makes no sets above
// them): their accuracies and each family's highest level passed join the metrics, as a run's do.
import type { SkillProbe } from '../../curricula/index.js';
import { levelSetMetrics, masteryRecords, skillProbeMetrics, type LevelResult, type WriteOp } from '../run/index.js';
import type { ServedParts } from './served-state.js';
import type { ProbeReport } from './types.js';

export async function probeChange(
  p: ServedParts,
  round: number,
  scores: { overall: number; perSkill: ReadonlyMap<string, SkillProbe>; perLevel: readonly LevelResult[] },
): Promise<{ result: ProbeReport; ops: WriteOp[] }> {
  const { cur } = p;
  const step = cur.state.step;
  const at = new Date(p.now()).toISOString();
  const events = cur.mastery.observe(step, scores.perSkill);
  cur.state.probeRound = round;
  cur.state.probeAccuracy = scores.overall;
  const outbox = masteryRecords(p.runId, step, at, events, p.log);
  return {
    result: {
      round,
      accepted: true,
      detail: null,
      accuracy: scores.overall,
      per_skill: Object.fromEntries([...scores.perSkill].map(([id, x]) => [id, x.accuracy])),
      events: events.map((ev) => ({ skill_id: ev.skillId, event: ev.event, accuracy: ev.accuracy })),
    },
    // The round's accuracies join the step's metrics, where `cogen skills` and the dashboard read a run's probes.
    ops: [
      {
        op: 'events',
        step,
        outbox,
        metrics: {
          probeAccuracy: scores.overall,
          skillsMastered: cur.mastery.mastered().size,
          ...skillProbeMetrics(scores.perSkill),
          ...levelSetMetrics(scores.perLevel, scores.perSkill, p.space.skills, cur.mastery.opts),
        },
      },
    ],
  };
}
