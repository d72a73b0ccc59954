// What `cogen setup tensorflow` needs of the machine, found or refused in one line (UserError): a
// Linux x86_64 host, pip, a C++ compiler, make, Python 3, the Node.js headers, node-gyp, and the
// node_modules folder that holds the tfjs-core the solver imports.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { run } from './shell.js';

export function fail(msg: string): never {
  throw new UserError(`setup tensorflow: ${msg}`);
}

/** The node_modules folder that holds the tfjs-core the solver imports (the addon must register there). */
export function nodeModulesDir(): string {
  const req = createRequire(import.meta.url);
  const core = dirname(req.resolve('@tensorflow/tfjs-core/package.json'));
  return dirname(dirname(core));
}

/** A python with pip: COGEN_PYTHON, python3, python. */
function findPip(): string[] {
  const cands = [process.env.COGEN_PYTHON, 'python3', 'python'].filter((c): c is string => !!c);
  for (const py of cands) if (run(py, ['-m', 'pip', '--version']).ok) return [py, '-m', 'pip'];
  if (run('pip3', ['--version']).ok) return ['pip3'];
  fail(
    'pip is missing (tried python3 -m pip, python -m pip, pip3); install pip, or set COGEN_PYTHON to a python that has it',
  );
}

/** The folder with include/node/node_api.h and common.gypi, so that node-gyp downloads nothing. */
function findNodeDir(): string {
  const ver = process.version.slice(1);
  const cands = [
    process.env.npm_config_nodedir,
    dirname(dirname(process.execPath)),
    join(homedir(), '.cache', 'node-gyp', ver),
    '/usr',
    '/usr/local',
  ].filter((c): c is string => !!c);
  for (const d of cands) {
    if (existsSync(join(d, 'include', 'node', 'node_api.h')) && existsSync(join(d, 'include', 'node', 'common.gypi')))
      return d;
  }
  fail(
    `no Node.js ${process.version} headers (include/node/node_api.h and common.gypi) in ${cands.join(', ')}; install them (e.g. the nodejs dev package) or set npm_config_nodedir`,
  );
}

export function checkPrerequisites(): { pip: string[]; nodedir: string; python: string } {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    fail(`the pinned wheels are for Linux x86_64, not ${process.platform} ${process.arch}`);
  const pip = findPip();
  const python = pip[0] === 'pip3' ? 'python3' : pip[0]!;
  const cxx = process.env.CXX ?? 'c++';
  if (!run(cxx, ['--version']).ok && !run('g++', ['--version']).ok)
    fail(`no C++ compiler (${cxx}, g++) to build the addon; install one (e.g. build-essential)`);
  if (!run('make', ['--version']).ok)
    fail('make is missing; node-gyp needs it to build the addon (e.g. build-essential)');
  if (!run(python, ['-c', 'import zipfile']).ok)
    fail(`${python} cannot run; node-gyp and the wheel extraction need Python 3`);
  return { pip, nodedir: findNodeDir(), python };
}

export function nodeGyp(): string | undefined {
  // node-pre-gyp runs node-gyp; npm's bundled copy when none is installed
  const npmDir = join(
    dirname(dirname(process.execPath)),
    'lib',
    'node_modules',
    'npm',
    'node_modules',
    'node-gyp',
    'bin',
    'node-gyp.js',
  );
  return process.env.npm_config_node_gyp ?? (existsSync(npmDir) ? npmDir : undefined);
}
