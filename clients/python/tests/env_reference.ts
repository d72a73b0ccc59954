// Test helper for test_envs.py: the reference policy's actions for the environment a served request
// makes (kind, family, level, seed), as JSON on stdout. Run with `npx tsx`.
import { createSandbox } from '../../../sandbox/index.js';
import { Env, generateEnv, referencePolicy, requestRng, type EnvKind } from '../../../envs/index.js';

const [kind, family, level, seed] = process.argv.slice(2);
const sb = await createSandbox({ workers: 1 });
const spec = await generateEnv(sb, { kind: kind as EnvKind, family: family!, level: Number(level), rng: requestRng(kind as EnvKind, family!, Number(level), Number(seed)) });
const env = new Env(spec, sb);
const obs = env.reset(Number(seed));
const policy = referencePolicy(spec);
const actions = [];
for (let a = await policy(obs, []); a; a = await policy(obs, env.trajectory().steps)) {
  actions.push({ name: a.name, arguments: JSON.parse(a.arguments as string) });
  await env.step(a);
}
process.stdout.write(JSON.stringify({ env_id: spec.id, actions }));
await sb.close();
