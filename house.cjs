// The house (docs/DESIGN.md, "The house"), listed once: its ground floor, its rooms, its roof and what
// stands outside it. .dependency-cruiser.cjs builds its rules from this list and eslint.config.js its
// size limits; `npm run lint` checks both.
module.exports = {
  /** The ground floor: what every room shares. Not a room: its files are imported directly. */
  floor: 'core',
  /** The rooms: each is entered through its index.ts, or its config.ts for a schema alone; test/ and bench/ may also use its testing.ts. */
  rooms: [
    'generators',
    'curricula',
    'sandbox',
    'graphs',
    'proposers',
    'envs',
    'bridges',
    'src/solver',
    'src/agents',
    'src/run',
  ],
  /** The roof, where the rooms meet: src/*.ts and these folders of src/ (the command line, the server, the dashboard, `cogen setup`, `cogen worker`). */
  roof: ['cli', 'server', 'dashboard', 'setup', 'workers'],
  /** Outside the house: they read it, and nothing in it imports them (scripts/ writes the generated docs). */
  outside: ['scripts', 'test', 'bench'],
};
