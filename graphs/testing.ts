// The graphs room's second door, for test/ and bench/ only: the internals they check directly. The
// house enters by index.ts (docs/DESIGN.md, "The house"); nothing in it imports this file.
export { docsQuery } from './docs-queries.js';
export { EmbeddedSkillGraph } from './embedded.js';
// @ts-expect-error plain JS module without type declarations
export { startLocalNeo4j } from './neo4j-local.js';
export { Neo4jSkillGraph } from './neo4j.js';
export { drainOutbox, replayAll } from './outbox.js';
export { type GraphEvent, type GraphTask, type Mastery, type OutboxSource, type SkillGraph } from './types.js';
export { compareRuns, formatTable, frontier, masteryTable, renderSkills, showSkill, timeline } from './views.js';
