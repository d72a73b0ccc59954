// The Cypher queries printed in docs/graph.md, read from the page itself, so that the tests and
// bench:served-neo4j run exactly what users are shown (and the page's queries stay runnable).
import { readFileSync } from 'node:fs';

/** The Cypher statement under a `// <title>` comment in docs/graph.md, without its `;`. */
export function docsQuery(title: string): string {
  const doc = readFileSync(new URL('../docs/graph.md', import.meta.url), 'utf8');
  const at = doc.indexOf(`// ${title}`);
  if (at < 0) throw new Error(`docs/graph.md has no query titled "${title}"`);
  const body = doc.slice(doc.indexOf('\n', at) + 1);
  return body.slice(0, body.indexOf(';'));
}
