// The house's rules, built from its one list (house.cjs): `npm run lint` checks them on all of it.
const { floor: FLOOR, rooms: ROOMS, roof: ROOF_DIRS, outside: OUTSIDE } = require('./house.cjs');

const any = (xs) => `(${xs.join('|')})`;
const ROOM = any(ROOMS);
const ROOF = `^src/([^/]+\\.ts|${ROOF_DIRS.map((d) => `${d}/`).join('|')})`;
const HOUSE = `^${any([FLOOR, ...ROOMS, 'src'])}/`;

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'ground-floor',
      comment: 'core/ holds what every room shares, so it imports none of them',
      severity: 'error',
      from: { path: `^${FLOOR}/` },
      to: { path: `^${any([...ROOMS, 'src'])}/` },
    },
    {
      name: 'no-upward-import',
      comment: 'a room never reaches up into the roof',
      severity: 'error',
      from: { path: `^${any([FLOOR, ...ROOMS])}/` },
      to: { path: ROOF },
    },
    {
      name: 'room-door',
      comment: 'another room is entered through its index.ts, or its config.ts for a schema alone',
      severity: 'error',
      from: { path: `^${ROOM}/` },
      to: { path: `^${ROOM}/`, pathNot: ['^$1/', '/(index|config)\\.ts$'] },
    },
    {
      name: 'roof-uses-doors',
      comment: 'the roof meets the rooms at their doors too',
      severity: 'error',
      from: { path: ROOF },
      to: { path: `^${ROOM}/`, pathNot: '/(index|config)\\.ts$' },
    },
    {
      name: 'outside-uses-doors',
      comment:
        'tests and benchmarks enter a room by its doors; testing.ts is the one that holds the internals they check',
      severity: 'error',
      from: { path: `^${any(['test', 'bench'])}/` },
      to: { path: `^${ROOM}/`, pathNot: '/(index|config|testing)\\.ts$' },
    },
    {
      name: 'testing-door-for-tests',
      comment: "a room's testing.ts is for test/ and bench/: nothing in the house imports one",
      severity: 'error',
      from: { path: HOUSE, pathNot: '/testing\\.ts$' },
      to: { path: `^${ROOM}/testing\\.ts$` },
    },
    {
      name: 'outside-stays-outside',
      comment: 'scripts/, test/ and bench/ read the house; nothing in the house imports them',
      severity: 'error',
      from: { path: HOUSE },
      to: { path: `^${any(OUTSIDE)}/` },
    },
    {
      name: 'server-without-agents',
      comment:
        'cogen serve scores with the sandbox and renders with the generators; it never loads the LLM agents (LangChain)',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/agents/' },
    },
    {
      name: 'curricula-without-envs',
      comment: 'a controller sees per-arm statistics only; an environment kind is a name from core/task.ts',
      severity: 'error',
      from: { path: '^curricula/' },
      to: { path: '^envs/' },
    },
  ],
  options: {
    includeOnly: `^${any([FLOOR, ...ROOMS, 'src', ...OUTSIDE])}/`,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|runs|scratch|test-artifacts|graphs/neo4j-launcher|bench/results)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
