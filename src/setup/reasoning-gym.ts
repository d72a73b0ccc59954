// `cogen setup reasoning-gym`: a virtual environment (COGEN_RG_VENV, else <cache>/rg-venv) with PyPI's
// reasoning-gym pinned, then the catalogue of bridged families (bridges/) written next to it. Idempotent:
// a bridge whose package imports and whose catalogue the pinned version built is left as it is.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError } from '../../core/errors.js';
import { lastLine, run } from './shell.js';

export interface RgSetupOptions {
  log?: (line: string) => void;
  /** Items checked per level when building the catalogue (default 8). */
  itemsPerLevel?: number;
  /** Build the catalogue again even when one exists. */
  rebuild?: boolean;
}

/** A Python >= 3.10 with venv: COGEN_PYTHON, python3, python. */
function findVenvPython(): string {
  const cands = [process.env.COGEN_PYTHON, 'python3', 'python'].filter((c): c is string => !!c);
  for (const py of cands) {
    const r = run(py, [
      '-c',
      'import sys, venv, ensurepip; assert sys.version_info >= (3, 10); print(sys.version.split()[0])',
    ]);
    if (r.ok) return py;
  }
  throw new UserError(
    `setup reasoning-gym: no Python >= 3.10 with venv and ensurepip (tried ${cands.join(', ')}); install one (e.g. python3-venv), or set COGEN_PYTHON`,
  );
}

/** Sets up the Reasoning Gym bridge; returns a summary line. Throws UserError with one line. */
export async function setupReasoningGym(opts: RgSetupOptions = {}): Promise<string> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const { REASONING_GYM_VERSION, RgWorker, buildCatalogue, loadCatalogue, reloadCatalogue, rgPaths, writeCatalogue } =
    await import('../../bridges/index.js');
  const paths = rgPaths();
  const rgFail = (msg: string): never => {
    throw new UserError(`setup reasoning-gym: ${msg}`);
  };
  const installed = (): string | null => {
    if (!existsSync(paths.python)) return null;
    const r = run(paths.python, [
      '-c',
      'import importlib.metadata as m, reasoning_gym; print(m.version("reasoning-gym"))',
    ]);
    return r.ok ? lastLine(r.stdout) : null;
  };
  let version = installed();
  if (version !== REASONING_GYM_VERSION) {
    if (!existsSync(paths.python)) {
      const py = findVenvPython();
      log(`creating a virtual environment at ${paths.venv} (${py})`);
      mkdirSync(dirname(paths.venv), { recursive: true });
      const r = run(py, ['-m', 'venv', paths.venv]);
      if (!r.ok) rgFail(`python -m venv ${paths.venv} failed: ${lastLine(r.out)}`);
    }
    log(`installing reasoning-gym==${REASONING_GYM_VERSION} and its dependencies into it (pip; ~350 MB installed)`);
    const r = run(paths.python, [
      '-m',
      'pip',
      'install',
      '--disable-pip-version-check',
      '--quiet',
      `reasoning-gym==${REASONING_GYM_VERSION}`,
    ]);
    if (!r.ok) rgFail(`pip install reasoning-gym==${REASONING_GYM_VERSION} failed: ${lastLine(r.out)}`);
    version = installed();
    if (version !== REASONING_GYM_VERSION)
      rgFail(`reasoning-gym ${REASONING_GYM_VERSION} was installed but does not import in ${paths.python}`);
  }
  reloadCatalogue();
  const have = loadCatalogue();
  if (have && have.reasoningGym === REASONING_GYM_VERSION && !opts.rebuild) {
    const line = `Reasoning Gym ${version} is set up in ${paths.venv}: ${have.families.length} bridged families, ${have.excluded.length} excluded; nothing to do`;
    log(line);
    return line;
  }
  log(
    `building the catalogue: every dataset's curriculum levels, ${opts.itemsPerLevel ?? 8} items of each checked in the worker (a few minutes)`,
  );
  const worker = new RgWorker({ log });
  try {
    const catalogue = await buildCatalogue(worker, { itemsPerLevel: opts.itemsPerLevel, log });
    writeCatalogue(catalogue);
    const line = `Reasoning Gym ${version} is set up in ${paths.venv}: ${catalogue.families.length} bridged families (${catalogue.families.reduce((n, f) => n + f.levels.length, 0)} levels), ${catalogue.excluded.length} excluded (\`cogen setup reasoning-gym --list\`)`;
    log(line);
    return line;
  } catch (e) {
    return rgFail(`building the catalogue failed: ${(e as Error).message}`);
  } finally {
    worker.close();
  }
}

/** The bridged families and the excluded datasets with their reasons, as text. */
export async function listReasoningGym(): Promise<string> {
  const { loadCatalogue, notSetUpLine } = await import('../../bridges/index.js');
  const c = loadCatalogue();
  if (!c) throw new UserError(notSetUpLine());
  const lines = [
    `Reasoning Gym ${c.reasoningGym} (Python ${c.python}, catalogue of ${c.createdAt}): ${c.families.length} bridged families, ${c.excluded.length} excluded`,
    '',
  ];
  for (const f of c.families) {
    const share = f.levels.map((l) => `${l.served}/${l.tried}`).join(' ');
    lines.push(
      `rg.${f.dataset}  ${f.levels.length} level${f.levels.length === 1 ? '' : 's'}  ${f.category}${f.curriculum ? '' : '  (no curriculum: its default config)'}  verified at setup: ${share}`,
    );
  }
  lines.push('', 'excluded (never served):');
  for (const x of c.excluded) lines.push(`rg.${x.dataset}  ${x.reason}`);
  return lines.join('\n');
}
