import { configDefaults, defineConfig } from 'vitest/config';

// Two lanes (docs/testing.md): `npm test` runs both, `npm run test:unit` and `npm run test:e2e` one.
// unit: in-process and quick (a 2-core machine runs the lane in well under a minute): no global
// setup, no Neo4j, PostgreSQL or NATS, no spawned CLI or server process, no listening port, no
// browser, no whole run. e2e: every other file, with the global setup that starts the services
// those need; also the long in-process sweeps (every family × level in the sandbox, the hostile
// corpus, solver training and data-parallel checks), which would take the unit lane past a minute.
// This list is the one home of the split: a new test file is e2e until it is named here.
const UNIT = [
  'agents',
  'agents-fixture',
  'bench-stats',
  'cli-resume-graph',
  'config',
  'curricula',
  'curricula-adaptive',
  'curricula-skills',
  'directed',
  'docs-current',
  'envs',
  'evolve',
  'envs-llm',
  'export',
  'forgetting',
  'generators.sandbox',
  'graph-outbox',
  'hash',
  'label',
  'level-frontier',
  'levels-passed',
  'proposer',
  'rehearsal',
  'reward',
  'sandbox',
  'sandbox-budget',
  'sandbox-properties',
  'sandbox-starvation',
  'task-archive',
  'self-play',
  'served-view',
  'solver.decode-native',
  'solver.grouped',
  'solver.loss',
  'solver.optim',
  'solver.self-imitation',
  'solver.view',
  'unmastered',
  'working',
].map((name) => `test/${name}.test.ts`);

export default defineConfig({
  test: {
    // 2 cores: a few forks at most; the sandbox already uses worker threads inside a test.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT],
          // Run only when an e2e file is selected (vitest runs a project's global setup for its own files).
          globalSetup: ['test/setup/neo4j.ts', 'test/setup/services.ts'],
        },
      },
    ],
  },
});
