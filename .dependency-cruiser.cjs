// The house (docs/DESIGN.md, "The house"; README "Where things are"): core/ is the ground floor,
// the rooms stand on it, the roof (src/*.ts, the command line in src/cli/, the server, the
// dashboard) is where they meet. `npm run lint` checks it. core/ is a floor, not a room: its files
// are imported directly.
const ROOMS = '(generators|curricula|sandbox|graphs|proposers|envs|bridges|src/solver|src/agents|src/run)';
// src/cli/ is part of the roof, not a room: it is src/cli.ts's commands, one file each, and like
// the rest of the roof it may import every room (at its door) while no room may import it.
const ROOF = '^src/([^/]+\\.ts|cli/|server/|dashboard/)';
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'ground-floor',
      comment: 'core/ holds what every room shares, so it imports none of them',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(generators|curricula|sandbox|graphs|proposers|envs|bridges|src)/' },
    },
    {
      name: 'no-upward-import',
      comment: 'a room never reaches up into the roof (src/*.ts, the command line, the server, the dashboard)',
      severity: 'error',
      from: { path: `^(core|${ROOMS.slice(1, -1)})/` },
      to: { path: ROOF },
    },
    {
      name: 'room-door',
      comment: 'another room is entered through its index.ts, or its config.ts for a schema alone',
      severity: 'error',
      from: { path: `^${ROOMS}/` },
      to: { path: `^${ROOMS}/`, pathNot: ['^$1/', '/(index|config)\\.ts$'] },
    },
    {
      name: 'scripts-outside',
      comment: 'scripts/ (the docs generators, npm run docs) read the house; nothing in the house imports them',
      severity: 'error',
      from: { path: '^(core|generators|curricula|sandbox|graphs|proposers|envs|bridges|src)/' },
      to: { path: '^scripts/' },
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
    {
      name: 'roof-uses-doors',
      comment: 'the roof meets the rooms at their doors too',
      severity: 'error',
      from: { path: ROOF },
      to: { path: `^${ROOMS}/`, pathNot: '/(index|config)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|runs|scratch|test-artifacts|graphs/neo4j-launcher)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
