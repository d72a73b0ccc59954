// docs/config.md, written from the run config's zod schemas (src/run/config.ts and the room schemas it
// composes) through zod's own JSON Schema export, so that every field, type and default is the
// code's. zod keeps no JSDoc, so the descriptions are read from the schema sources: a z.object
// literal's `/** … */` comments are matched to the JSON Schema object with the same set of keys.
// `npm run docs` rewrites the page; test/docs-current.test.ts fails when it is not current.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { z } from 'zod';
import { listPresets, runConfigSchema } from '../src/run/index.js';

const ROOT = join(import.meta.dirname, '..');
/** Where the run config's schemas are written (src/run/config.ts composes them). */
const SCHEMA_DIRS = ['src', 'curricula', 'sandbox', 'proposers', 'core', 'envs'];

/**
 * The sections in words: what each top-level key is for, beside the generated field tables. Every
 * top-level key of runConfigSchema must be named here (renderConfigDoc throws otherwise).
 */
const OVERVIEW = `| key | meaning |
| --- | --- |
| \`name\`, \`description\` | the preset's name (default: its file name) and the line \`cogen presets\` prints |
| \`seed\`, \`steps\` | random seed; number of solver steps (one GRPO update each) |
| \`batch\`, \`group\` | B tasks per step, G answers sampled per task |
| \`families\`, \`maxLevel\`, \`types\` | the task space: generator families, levels 0…maxLevel (null or omitted: open, see [levels.md](levels.md)), task types (\`deduction\`, \`abduction\`, \`induction\`, and \`problem\` for the problem families, [problems.md](problems.md); default the three code types; each family gets the types it makes) |
| \`environments\` | agentic environment kinds (\`probe\`, \`repair\`, \`search\`) the curriculum picks beside the task types, each family × level × kind an arm (default none; [agentic.md](agentic.md)) |
| \`curriculum\` | \`controller\`, \`explore\`, \`rehearsal\` (the share of each step's picks that goes to fresh tasks at a mastered skill's family and level, so that learning one skill does not erase another; default 0.15, none before anything is mastered, none around the \`uniform\` and \`hardest\` baselines), \`gating\`, per-controller options, \`mastery.learnAt/forgetBelow/margin\` (a skill is learned at \`learnAt\` probe accuracy *and* \`margin\` above the best trivial policy on its probes) |
| \`solver\` | backend ([backends.md](backends.md)), model size, loss type and its ε/β, \`loss.entropy\` (entropy bonus, default 0), optimiser and schedule (the cosine schedule spans the run's \`steps\`), sampling, \`typedAnswers\` (decode each answer in its type's grammar: an int where f returns an int, the argument types for abduction; default on), \`workers\` (threads an update runs on, data-parallel: 0, the default, is one per core up to 4 on wasm and 1 elsewhere), \`selfImitation\` (keep one rewarded answer of the policy's own per prompt and put it into later groups of that prompt that find none; an extension of the published losses, default off), \`init\` (a checkpoint directory, \`runs/<id>/checkpoints/step-…\`, whose model weights start the solver, to go on training it under another curriculum or proposer; the optimiser and sampling start fresh; not in \`cogen serve\`) |
| \`reward\` | partial credit for a wrong deduction answer, for the update only; recorded rewards, curricula and probes stay exact. \`numericPartial\` (≤ 0.9): scaled by 1 / (1 + distance) for a close wrong number (in bench:learn it did not teach arithmetic). \`prefixPartial\` (≤ 0.9): scaled by the share of the reference literal's characters the answer gets right from its start. Both default to 0 |
| \`probes\` | mastery probes: \`every\` K steps, at least \`perArm\` held-out tasks per (family, level, type); each skill also gets the probes its mastery needs (17 with the defaults), chosen so that no trivial policy passes them (\`src/run/probes.ts\`) |
| \`sandbox\` | \`workers\`, \`timeoutMs\` (a deadline per call, counted in interpreter steps at 10,000 a ms, with a wall-clock safety net 20× it), \`memoryBytes\`, \`budget\` (\`factor\` 20, \`floor\` 20,000, \`cap\` 5,000,000: an answer's budget in interpreter steps is clamp(factor × the reference's measured cost, floor, cap)); [sandbox.md](sandbox.md) |
| \`checkpointEvery\` | checkpoint period in steps |
| \`graph\` | \`kind: embedded\\|neo4j\`, \`uri\`, \`user\`, \`database\`, \`batchSize\` ([graph.md](graph.md)) |
| \`agents\` | LLM \`proposer\` (\`share\`, provider, model, …) and LLM \`solver\` (\`enabled\`, …): [agents.md](agents.md) |
| \`proposer\` | \`learned\`: the grammar proposer that learns; \`selfPlay\`: the solver's network writes the fresh tasks (both off by default): [proposers.md](proposers.md) |
| \`serve\` | \`cogen serve\` only: \`ttlSeconds\` (a sampled task not scored within it is abandoned: counted, never fed to the curriculum; default 900), and the request limits \`maxSample\`, \`maxItems\`, \`maxCompletionChars\`, \`maxBodyBytes\`, \`maxSessions\` ([serve.md](serve.md)) |`;

type Json = Record<string, any>;

interface ObjectDocs {
  fields: Map<string, string>;
  /** The comment on the schema itself (a `/** … *\/` above `const xSchema = z.object(…)`). */
  self?: string;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === 'node_modules' ? [] : tsFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

function jsDoc(node: ts.Node): string | undefined {
  const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc;
  const text = docs
    ?.map((d) => (typeof d.comment === 'string' ? d.comment : (ts.getTextOfJSDocComment(d.comment) ?? '')))
    .join(' ')
    .trim();
  return text ? text.replace(/\s+/g, ' ') : undefined;
}

/** key set (sorted, comma-joined) → the comments of every z.object literal with those keys. */
function collectDocs(): Map<string, ObjectDocs> {
  const found = new Map<string, ObjectDocs>();
  for (const file of SCHEMA_DIRS.flatMap((d) => tsFiles(join(ROOT, d)))) {
    const text = readFileSync(file, 'utf8');
    if (!/\bz\s*\.\s*(strictObject|object)\s*\(/.test(text)) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const literals = new Map<string, ts.ObjectLiteralExpression>();
    const visitDecls = (n: ts.Node): void => {
      if (
        ts.isVariableDeclaration(n) &&
        ts.isIdentifier(n.name) &&
        n.initializer &&
        ts.isObjectLiteralExpression(n.initializer)
      )
        literals.set(n.name.text, n.initializer);
      ts.forEachChild(n, visitDecls);
    };
    visitDecls(source);
    const visit = (n: ts.Node): void => {
      if (
        ts.isCallExpression(n) &&
        ts.isPropertyAccessExpression(n.expression) &&
        ['object', 'strictObject'].includes(n.expression.name.text) &&
        n.arguments[0] &&
        ts.isObjectLiteralExpression(n.arguments[0])
      ) {
        const fields = new Map<string, string>();
        const add = (lit: ts.ObjectLiteralExpression): void => {
          for (const p of lit.properties) {
            if (ts.isSpreadAssignment(p) && ts.isIdentifier(p.expression) && literals.has(p.expression.text))
              add(literals.get(p.expression.text)!);
            else if (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)))
              fields.set(p.name.text, jsDoc(p) ?? '');
          }
        };
        add(n.arguments[0]);
        // The comment of the declaration or property this schema is the value of (through .strict(), .default(…), …).
        let up: ts.Node = n;
        while (up.parent && (ts.isPropertyAccessExpression(up.parent) || ts.isCallExpression(up.parent)))
          up = up.parent;
        const holder = up.parent && ts.isVariableDeclaration(up.parent) ? up.parent.parent.parent : up.parent;
        const self =
          holder && (ts.isVariableStatement(holder) || ts.isPropertyAssignment(holder)) ? jsDoc(holder) : undefined;
        const key = [...fields.keys()].sort().join(',');
        const docs = found.get(key) ?? { fields: new Map<string, string>() };
        for (const [k, v] of fields) if (v && !docs.fields.get(k)) docs.fields.set(k, v);
        docs.self ??= self;
        found.set(key, docs);
      }
      ts.forEachChild(n, visit);
    };
    visit(source);
  }
  return found;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function typeOf(s: Json): string {
  if (s.anyOf) return (s.anyOf as Json[]).map(typeOf).join(' or ');
  if (s.enum) return `one of ${(s.enum as unknown[]).map((v) => `\`${String(v)}\``).join(', ')}`;
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  const t = s.type as string | undefined;
  if (t === 'integer' || t === 'number') {
    const max = s.maximum === MAX_SAFE ? undefined : s.maximum;
    if (s.minimum !== undefined && max !== undefined) return `${t} in [${s.minimum}, ${max}]`;
    const bounds: string[] = [];
    if (s.minimum !== undefined) bounds.push(`≥ ${s.minimum}`);
    if (s.exclusiveMinimum !== undefined) bounds.push(`> ${s.exclusiveMinimum}`);
    if (max !== undefined) bounds.push(`≤ ${max}`);
    if (s.exclusiveMaximum !== undefined) bounds.push(`< ${s.exclusiveMaximum}`);
    return `${t} ${bounds.join(', ')}`.trim();
  }
  if (t === 'array')
    return `array of ${s.items ? typeOf(s.items) : 'any'}${s.minItems ? ` (at least ${s.minItems})` : ''}`;
  if (t === 'string') return s.format ? `string (${s.format})` : s.minLength ? `string (non-empty)` : 'string';
  if (t === 'object') return s.properties ? 'section' : 'object';
  return t ?? 'any';
}

function defaultOf(s: Json): string {
  if (!('default' in s)) return '';
  const d = s.default;
  if (d !== null && typeof d === 'object' && !Array.isArray(d)) return '';
  return `\`${JSON.stringify(d)}\``;
}

function rows(
  s: Json,
  path: string[],
  required: boolean,
  doc: string,
  docs: Map<string, ObjectDocs>,
  out: string[],
): void {
  const props = s.properties as Record<string, Json> | undefined;
  const own = props ? docs.get(Object.keys(props).sort().join(',')) : undefined;
  const description = doc || own?.self || '';
  const notes = required && !('default' in s) ? 'required. ' : '';
  if (path.length > 0)
    out.push(`| \`${path.join('.')}\` | ${cell(typeOf(s))} | ${defaultOf(s)} | ${cell(notes + description)} |`);
  if (!props) return;
  const req = new Set((s.required as string[] | undefined) ?? []);
  for (const [k, child] of Object.entries(props))
    rows(child, [...path, k], req.has(k), own?.fields.get(k) ?? '', docs, out);
}

export function renderConfigDoc(): string {
  const schema = z.toJSONSchema(runConfigSchema, { io: 'input', unrepresentable: 'any' }) as Json;
  const docs = collectDocs();
  const props = schema.properties as Record<string, Json>;
  const unexplained = Object.keys(props).filter((k) => !OVERVIEW.includes(`\`${k}\``));
  if (unexplained.length > 0)
    throw new Error(`scripts/docs-config.ts: OVERVIEW does not explain ${unexplained.join(', ')}`);
  const required = new Set(schema.required as string[]);
  const top = docs.get(Object.keys(props).sort().join(','));
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs` (scripts/docs-config.ts) from the zod schemas that src/run/config.ts composes; edit those, not this file. -->',
    '',
    'A run is configured by a preset: a YAML file in `curricula/` (or any path given to `--preset`),',
    'validated with zod (`src/run/config.ts`, which composes the schema each room owns for its section). A',
    'bad field is reported with its path, its value and what was expected; an unknown field is refused.',
    'Command-line flags override the preset ([cli.md](cli.md)). API keys are never configuration',
    '([agents.md](agents.md)).',
    '',
    '## Presets',
    '',
    '`cogen presets` lists them; `--preset <name>` picks one.',
    '',
    '| preset | description |',
    '| --- | --- |',
    ...listPresets().map((p) => `| [\`${p.name}\`](../${relative(ROOT, p.path)}) | ${cell(p.description)} |`),
    '',
    '## The sections',
    '',
    OVERVIEW,
    '',
    '## Every field',
    '',
    'Types, bounds and defaults as the schemas state them; a section whose fields all have defaults may',
    'be left out.',
    '',
  ];
  const scalars: string[] = [];
  for (const [k, child] of Object.entries(props)) {
    if (child.properties) continue;
    rows(child, [k], required.has(k), top?.fields.get(k) ?? '', docs, scalars);
  }
  lines.push('### The run', '', '| field | type | default | meaning |', '| --- | --- | --- | --- |', ...scalars, '');
  for (const [k, child] of Object.entries(props)) {
    if (!child.properties) continue;
    const out: string[] = [];
    rows(child, [k], required.has(k), top?.fields.get(k) ?? '', docs, out);
    lines.push(`### \`${k}\``, '', '| field | type | default | meaning |', '| --- | --- | --- | --- |', ...out, '');
  }
  return lines.join('\n').replace(/\n+$/, '\n');
}
