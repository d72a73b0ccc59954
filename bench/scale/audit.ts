// Reads a PostgreSQL run back against a client's log of acknowledged score requests (docs/scale-out.md):
// every acknowledged key stored once, as the step its first answer named, with the episodes that
// answer showed (the same rewards, reasons and answers); no key answered twice with different
// bodies; nothing applied twice (one step per stored request, each with its own episodes); and the
// run's counters equal to the store's rows. For the chaos benches and the fault tests alike.
import type pg from 'pg';

export interface Ack {
  key: string;
  /** Every 2xx answer for the key: step and results, as JSON. */
  bodies: string[];
}

/** Notes a 2xx answer to a score request in the client's log. */
export function noteAck(acks: Map<string, Ack>, key: string, res: { step: number; results: unknown[] }): void {
  const ack = acks.get(key) ?? { key, bodies: [] };
  ack.bodies.push(JSON.stringify({ step: res.step, results: res.results }));
  acks.set(key, ack);
}

/** What is wrong with the store against the acknowledged requests: one line each, none when it holds. */
export async function audit(db: pg.Pool, runId: string, acks: Map<string, Ack>): Promise<string[]> {
  const v: string[] = [];
  for (const a of acks.values())
    if (new Set(a.bodies).size > 1) v.push(`key ${a.key} was answered with ${new Set(a.bodies).size} different bodies`);
  const s = `"${runId}"`;
  const reqs = await db.query<{ key: string; step: number }>(`SELECT key, step FROM ${s}.requests`);
  const stepOf = new Map(reqs.rows.map((r) => [r.key, r.step]));
  const eps = await db.query<{ step: number; task_id: string; reward: number; reason: string | null; answer: string }>(
    `SELECT step, task_id, reward, reason, answer FROM ${s}.episodes ORDER BY id`,
  );
  const byStep = new Map<number, { task_id: string; reward: number; reason: string | null; answer: string }[]>();
  for (const e of eps.rows)
    (byStep.get(e.step) ?? byStep.set(e.step, []).get(e.step)!).push({
      task_id: e.task_id,
      reward: e.reward,
      reason: e.reason,
      answer: e.answer,
    });
  for (const a of acks.values()) {
    const step = stepOf.get(a.key);
    if (step === undefined) {
      v.push(`acknowledged key ${a.key} is not in the store`);
      continue;
    }
    const first = JSON.parse(a.bodies[0]!) as { step: number; results: unknown[] };
    if (first.step !== step) v.push(`key ${a.key}: acknowledged as step ${first.step}, stored as step ${step}`);
    const stored = byStep.get(step) ?? [];
    if (JSON.stringify(stored) !== JSON.stringify(first.results))
      v.push(
        `key ${a.key}: the store's episodes of step ${step} differ from the acknowledged results (${stored.length} vs ${first.results.length})`,
      );
  }
  // Nothing applied twice: one step per request, each with its own episodes.
  if (new Set(reqs.rows.map((r) => r.step)).size !== reqs.rows.length)
    v.push(`${reqs.rows.length} requests are stored on ${new Set(reqs.rows.map((r) => r.step)).size} steps`);
  if (byStep.size !== reqs.rows.length)
    v.push(`${byStep.size} steps have episodes but ${reqs.rows.length} requests are stored`);
  const served = await db.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = 'served'`);
  const state = JSON.parse(served.rows[0]!.value) as { completions: number; step: number };
  if (state.completions !== eps.rows.length)
    v.push(`the run counts ${state.completions} completions, the store holds ${eps.rows.length} episodes`);
  if (state.step !== reqs.rows.length)
    v.push(`the run is at step ${state.step}, the store holds ${reqs.rows.length} requests`);
  return v;
}
