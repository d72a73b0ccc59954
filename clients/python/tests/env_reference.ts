// Test helper for test_envs.py: the reference policy's actions for the environment a served request
// makes (kind, family, level, seed), as JSON on stdout. Run with `npx tsx`.
import { createSandbox } from '../../../sandbox/index.js';
import { generateEnv, referenceActions, requestRng, type EnvKind } from '../../../envs/index.js';

const [kind, family, level, seed] = process.argv.slice(2);
const sb = await createSandbox({ workers: 1 });
const spec = await generateEnv(sb, { kind: kind as EnvKind, family: family!, level: Number(level), rng: requestRng(kind as EnvKind, family!, Number(level), Number(seed)) });
const actions = referenceActions(spec).map((a) => ({ name: a.name, arguments: JSON.parse(a.arguments as string) as unknown }));
process.stdout.write(JSON.stringify({ env_id: spec.id, actions }));
await sb.close();
