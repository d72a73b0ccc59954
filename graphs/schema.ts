// The Neo4j schema (constraints and indexes) as statements, read from schema.cypher: the Neo4j
// store applies them and the Cypher dump (views.ts) prints them, so neither owns the other.
import { readFileSync } from 'node:fs';

const SCHEMA_PATH = new URL('./schema.cypher', import.meta.url);

/** The statements of graphs/schema.cypher (comments dropped, split on `;`). */
export function schemaStatements(text = readFileSync(SCHEMA_PATH, 'utf8')): string[] {
  return text
    .split('\n')
    .filter((l) => !l.trim().startsWith('//'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
