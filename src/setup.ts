// `cogen setup tensorflow [--gpu]`: builds @tensorflow/tfjs-node (or -gpu) 4.22.0 against the
// TensorFlow C libraries inside PyPI's tensorflow-cpu (or tensorflow) 2.15.1 wheel, so the solver's
// `tensorflow` backend needs nothing beyond npm and PyPI. The package's own installer downloads
// libtensorflow from storage.googleapis.com; it never runs here:
//  1. the npm package is unpacked from its registry tarball (`npm pack`) without its install script,
//     its dependencies installed with `npm install --no-save --ignore-scripts` (package.json and the
//     lock file do not change; `npm ci` still installs what it did, and wipes all of this);
//  2. the wheel (pip download, cached in ~/.cache/cogen) gives deps/lib/libtensorflow_cc.so.2 and
//     libtensorflow_framework.so.2 (stripped: ~200 MB less) and the C API headers;
//  3. libtensorflow.so, the libtensorflow.so.2.9.1 marker the installer checks and
//     libtensorflow_framework.so link to them, and node-pre-gyp builds the addon from source
//     against the local Node.js headers;
//  4. --gpu: the CUDA libraries from the nvidia-*-cu12 wheels the tensorflow wheel names for its
//     `and-cuda` extra, `pip install --no-deps --target deps/` (where libtensorflow looks for them);
//     the driver comes from the host;
//  5. the CPU package only: the solver's fused ops (src/solver/accel/tf-ops.cc and tf-decode.cc),
//     compiled against the wheel's C++ headers (extracted once into the cache, ~155 MB) into
//     deps/lib/cogen_tf_ops.node.
// Idempotent: a set-up package that loads is left as it is (its fused ops are built again when
// their sources changed); re-run after any `npm ci`.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  lstatSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../core/errors.js';
import { TF_OPS_ADDON, tfOpsPath } from './solver/accel/index.js';

export const TFJS_NODE_VERSION = '4.22.0';
/** 2.15.1: all of tfjs-core's op tests pass on it; 2.21.0 fails int32 round (a kernel bug). */
export const TF_WHEEL_VERSION = '2.15.1';
const PY_TAG = 'cp311';
const PLATFORM = 'manylinux2014_x86_64';

export interface SetupOptions {
  gpu?: boolean;
  log?: (line: string) => void;
  /** where wheels and the npm tarball are kept (default ~/.cache/cogen, or COGEN_CACHE_DIR) */
  cacheDir?: string;
}

type Flavour = { pkg: string; wheel: string; approxMb: number };
const CPU: Flavour = { pkg: '@tensorflow/tfjs-node', wheel: 'tensorflow-cpu', approxMb: 207 };
const GPU: Flavour = { pkg: '@tensorflow/tfjs-node-gpu', wheel: 'tensorflow', approxMb: 475 };

function fail(msg: string): never {
  throw new UserError(`setup tensorflow: ${msg}`);
}

function run(cmd: string, args: string[], opts: SpawnSyncOptions = {}): { ok: boolean; out: string; stdout: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return {
    ok: r.status === 0 && !r.error,
    out: r.error ? String(r.error.message) : out,
    stdout: String(r.stdout ?? ''),
  };
}

function lastLine(s: string): string {
  return (
    s
      .trim()
      .split('\n')
      .filter((l) => l.trim())
      .pop() ?? ''
  );
}

/** The node_modules folder that holds the tfjs-core the solver imports (the addon must register there). */
function nodeModulesDir(): string {
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

function checkPrerequisites(): { pip: string[]; nodedir: string; python: string } {
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

function nodeGyp(): string | undefined {
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

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MB`;

function duBytes(path: string): number {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return 0;
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((a, n) => a + duBytes(join(path, n)), 0);
}

/** The wheel in the cache, downloaded once (pinned version, Python 3.11 manylinux: whatever python runs pip). */
function wheel(
  pip: string[],
  name: string,
  version: string,
  cache: string,
  approxMb: number | null,
  log: (l: string) => void,
): string {
  const stem = `${name.replace(/-/g, '_')}-${version}-`;
  const find = (): string | undefined => readdirSync(cache).find((f) => f.startsWith(stem) && f.endsWith('.whl'));
  const have = find();
  if (have) return join(cache, have);
  log(`downloading ${name} ${version} (${approxMb ? `~${approxMb} MB, ` : ''}PyPI wheel) into ${cache}`);
  const r = run(pip[0]!, [
    ...pip.slice(1),
    'download',
    '--no-deps',
    '--only-binary=:all:',
    '--disable-pip-version-check',
    '--python-version',
    '3.11',
    '--implementation',
    'cp',
    '--abi',
    PY_TAG,
    '--platform',
    PLATFORM,
    '-d',
    cache,
    `${name}==${version}`,
  ]);
  const got = find();
  if (!r.ok || !got) fail(`pip could not download ${name}==${version}: ${lastLine(r.out)}`);
  log(`  ${got}: ${mb(statSync(join(cache, got)).size)}`);
  return join(cache, got);
}

/** The npm tarball (cached) and its package.json. */
function npmTarball(pkg: string, cache: string, log: (l: string) => void): string {
  const file = join(cache, `${pkg.replace(/^@/, '').replace('/', '-')}-${TFJS_NODE_VERSION}.tgz`);
  if (existsSync(file)) return file;
  log(`downloading ${pkg}@${TFJS_NODE_VERSION} from the npm registry (~1 MB tarball; its install script is not run)`);
  const r = run('npm', ['pack', `${pkg}@${TFJS_NODE_VERSION}`, '--pack-destination', cache, '--silent']);
  if (!r.ok || !existsSync(file)) fail(`npm pack ${pkg}@${TFJS_NODE_VERSION} failed: ${lastLine(r.out)}`);
  return file;
}

// Extracts from the wheel: the two libraries, and the headers the binding includes.
const EXTRACT_PY = String.raw`
import json, os, re, shutil, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
libs = {'tensorflow/libtensorflow_cc.so.2', 'tensorflow/libtensorflow_framework.so.2'}
hdr = re.compile(r'^tensorflow/include/((tensorflow/c/.*\.h)|(.*ctstring.*\.h)|((xla/)?(tensorflow/)?tsl/c/.*\.h))$')
n = 0
with zipfile.ZipFile(whl) as z:
    for info in z.infolist():
        m = hdr.match(info.filename)
        if info.filename in libs:
            out = os.path.join(dest, 'lib', os.path.basename(info.filename))
        elif m:
            out = os.path.join(dest, 'include', m.group(1))
        else:
            continue
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(info) as src, open(out + '.part', 'wb') as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(out + '.part', out)
        n += 1
print(n)
`;

const CUDA_PY = String.raw`
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith('.dist-info/METADATA'))
    for line in z.read(meta).decode().splitlines():
        m = re.match(r'Requires-Dist: (nvidia-[A-Za-z0-9_-]+) ?\(?==([0-9.]+)\)? ?; .*extra == .and-cuda.', line)
        if m:
            print(m.group(1) + '==' + m.group(2))
`;

function link(dir: string, name: string, target: string): void {
  const p = join(dir, name);
  try {
    lstatSync(p);
    rmSync(p);
  } catch {
    /* absent */
  }
  symlinkSync(target, p);
}

/** Loads the addon in a child process and runs one op; returns a line about it, or throws. */
function probe(pkg: string, root: string): { ok: boolean; line: string } {
  const code = `const tf = require(${JSON.stringify(pkg)});
const y = tf.matMul(tf.tensor2d([[1,2],[3,4]]), tf.tensor2d([[1],[1]])).dataSync();
if (y[0] !== 3 || y[1] !== 7) throw new Error('wrong matMul ' + y);
console.log('tfjs-node ' + tf.version['tfjs-node'] + ', TensorFlow ' + tf.backend().binding.TF_Version + ', backend ' + tf.getBackend());`;
  const r = run(process.execPath, ['-e', code], { cwd: root, env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
  // TensorFlow's own log lines (stderr) are not the answer; the error is
  return { ok: r.ok, line: r.ok ? lastLine(r.stdout) : lastLine(r.out) };
}

// Extracts the wheel's C++ headers (tensorflow/include/**), the ones a custom op compiles against.
const EXTRACT_INCLUDE_PY = String.raw`
import os, shutil, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for info in z.infolist():
        if not info.filename.startswith('tensorflow/include/') or info.is_dir():
            continue
        out = os.path.join(dest, info.filename[len('tensorflow/include/'):])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(info) as src, open(out, 'wb') as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
`;

/** The fused ops' sources, compiled into one addon, and the header they share. */
const OPS_SOURCES = ['tf-ops.cc', 'tf-decode.cc'].map((f) =>
  fileURLToPath(new URL(`./solver/accel/${f}`, import.meta.url)),
);
const OPS_HEADER = fileURLToPath(new URL('./solver/accel/tf-ops.h', import.meta.url));
/**
 * The compiler's flags for the ops. -march=native: the addon is built on the machine that runs it
 * (setup runs on each). -fopenmp: the ops' threads are an OpenMP team; EIGEN_DONT_PARALLELIZE keeps
 * Eigen's products inside each unit of work on its one thread.
 */
const OPS_FLAGS = [
  '-std=c++17',
  '-O3',
  '-march=native',
  '-fopenmp',
  '-DEIGEN_DONT_PARALLELIZE',
  '-shared',
  '-fPIC',
  '-D_GLIBCXX_USE_CXX11_ABI=1',
  '-DEIGEN_MAX_ALIGN_BYTES=64',
];
/** What a build of the ops is made from: the source, the wheel whose headers it compiles against, the flags. */
const opsStamp = (): string => {
  const h = createHash('sha256');
  for (const f of [...OPS_SOURCES, OPS_HEADER]) h.update(readFileSync(f));
  return h.update(TF_WHEEL_VERSION).update(OPS_FLAGS.join(' ')).digest('hex').slice(0, 16);
};
const opsMarker = (pkgDir: string): string => join(pkgDir, 'deps', 'cogen-ops.json');
const opsBuilt = (pkgDir: string): boolean =>
  existsSync(tfOpsPath(pkgDir)) &&
  existsSync(opsMarker(pkgDir)) &&
  readFileSync(opsMarker(pkgDir), 'utf8').trim() === opsStamp();

/** Loads the addon and the ops in a child process and runs one; returns the error line, or null. */
function probeOps(pkg: string, root: string, addon: string): string | null {
  const code = `const tf = require(${JSON.stringify(pkg)});
require(${JSON.stringify(addon)});
const y = tf.backend().executeMultipleOutputs('CogenGelu', [], [tf.tensor1d([1])], 1)[0].dataSync()[0];
if (Math.abs(y - 0.8411920) > 1e-5) throw new Error('CogenGelu(1) = ' + y);`;
  const r = run(process.execPath, ['-e', code], { cwd: root, env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
  return r.ok ? null : lastLine(r.out);
}

/**
 * Compiles the ops' sources into deps/lib/cogen_tf_ops.node: a Node.js addon (so that Node keeps it loaded)
 * linked to the libtensorflow_framework.so.2 beside it, whose op registry it adds to.
 */
function buildOps(
  pkgDir: string,
  whl: string,
  o: { python: string; nodedir: string; cache: string; root: string; log: (l: string) => void },
): void {
  const include = join(o.cache, `tensorflow-${TF_WHEEL_VERSION}-include`);
  if (!existsSync(join(include, 'tensorflow', 'core', 'framework', 'op_kernel.h'))) {
    o.log(`extracting the wheel's C++ headers (~155 MB) into ${include}`);
    const tmp = `${include}.part`;
    rmSync(tmp, { recursive: true, force: true });
    const r = run(o.python, ['-c', EXTRACT_INCLUDE_PY, whl, tmp]);
    if (!r.ok) fail(`could not extract the headers from ${whl}: ${lastLine(r.out)}`);
    rmSync(include, { recursive: true, force: true });
    renameSync(tmp, include);
  }
  const lib = join(pkgDir, 'deps', 'lib');
  const out = tfOpsPath(pkgDir);
  const cxx = process.env.CXX ?? 'g++';
  o.log(`compiling the solver's fused ops (${OPS_SOURCES.join(', ')}) into ${out}`);
  const r = run(cxx, [
    ...OPS_FLAGS,
    `-DNODE_GYP_MODULE_NAME=${TF_OPS_ADDON.replace(/\.node$/, '')}`,
    `-I${include}`,
    `-I${join(o.nodedir, 'include', 'node')}`,
    ...OPS_SOURCES,
    `-L${lib}`,
    '-l:libtensorflow_framework.so.2',
    '-Wl,-rpath,$ORIGIN',
    '-o',
    `${out}.part`,
  ]);
  if (!r.ok) fail(`compiling ${OPS_SOURCES.join(' and ')} failed: ${lastLine(r.out)}`);
  renameSync(`${out}.part`, out);
  const bad = probeOps(CPU.pkg, o.root, out);
  if (bad) {
    rmSync(out, { force: true });
    fail(`the fused ops were built but do not run: ${bad}`);
  }
  writeFileSync(opsMarker(pkgDir), opsStamp() + '\n');
}

export function tensorflowPackageDir(gpu = false): string {
  return join(nodeModulesDir(), (gpu ? GPU : CPU).pkg);
}

/** Sets up @tensorflow/tfjs-node (or -gpu); returns the probe's line (versions). Throws UserError with one line. */
export function setupTensorflow(opts: SetupOptions = {}): string {
  const log = opts.log ?? ((l: string) => console.error(l));
  const f = opts.gpu ? GPU : CPU;
  const nm = nodeModulesDir();
  const root = dirname(nm);
  const pkgDir = join(nm, f.pkg);
  const deps = join(pkgDir, 'deps');
  const marker = join(deps, 'cogen-setup.json');
  const want = { pkg: f.pkg, version: TFJS_NODE_VERSION, wheel: `${f.wheel}==${TF_WHEEL_VERSION}` };
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === JSON.stringify(want)) {
    const p = probe(f.pkg, root);
    if (p.ok) {
      if (!opts.gpu && !opsBuilt(pkgDir)) {
        const { pip, nodedir, python } = checkPrerequisites();
        const cache = opts.cacheDir ?? process.env.COGEN_CACHE_DIR ?? join(homedir(), '.cache', 'cogen');
        buildOps(pkgDir, wheel(pip, f.wheel, TF_WHEEL_VERSION, cache, f.approxMb, log), {
          python,
          nodedir,
          cache,
          root,
          log,
        });
      }
      log(`${f.pkg} is set up (${p.line}${opts.gpu ? '' : ', fused ops built'}); nothing more to do`);
      return p.line;
    }
    log(`${f.pkg} is set up but does not load (${p.line}); building it again`);
  }
  const { pip, nodedir, python } = checkPrerequisites();
  const cache = opts.cacheDir ?? process.env.COGEN_CACHE_DIR ?? join(homedir(), '.cache', 'cogen');
  mkdirSync(cache, { recursive: true });

  // 1. the npm package, without its install script
  const tgz = npmTarball(f.pkg, cache, log);
  const tmp = join(cache, `unpack-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  let r = run('tar', ['xzf', tgz, '-C', tmp]);
  if (!r.ok) fail(`could not unpack ${tgz}: ${lastLine(r.out)}`);
  const pj = JSON.parse(readFileSync(join(tmp, 'package', 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const req = createRequire(join(nm, 'x.js'));
  const missing = Object.entries(pj.dependencies).filter(([d]) => {
    try {
      req.resolve(`${d}/package.json`);
      return false;
    } catch {
      return !existsSync(join(nm, d, 'package.json'));
    }
  });
  if (missing.length) {
    log(`installing its dependencies without saving them: ${missing.map(([d, v]) => `${d}@${v}`).join(' ')}`);
    r = run(
      'npm',
      ['install', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', ...missing.map(([d, v]) => `${d}@${v}`)],
      { cwd: root },
    );
    if (!r.ok) fail(`npm install of ${f.pkg}'s dependencies failed: ${lastLine(r.out)}`);
  }
  rmSync(pkgDir, { recursive: true, force: true });
  mkdirSync(dirname(pkgDir), { recursive: true });
  r = run('mv', [join(tmp, 'package'), pkgDir]);
  rmSync(tmp, { recursive: true, force: true });
  if (!r.ok) fail(`could not place ${f.pkg}: ${lastLine(r.out)}`);

  // 2. the TensorFlow C libraries and headers from the wheel
  const whl = wheel(pip, f.wheel, TF_WHEEL_VERSION, cache, f.approxMb, log);
  log(`extracting libtensorflow_cc.so.2, libtensorflow_framework.so.2 and the C API headers into ${deps}`);
  r = run(python, ['-c', EXTRACT_PY, whl, deps]);
  if (!r.ok) fail(`could not extract ${whl}: ${lastLine(r.out)}`);
  const lib = join(deps, 'lib');
  if (run('strip', ['--version']).ok) {
    for (const l of ['libtensorflow_cc.so.2', 'libtensorflow_framework.so.2']) {
      r = run('strip', ['--strip-unneeded', join(lib, l)]);
      if (!r.ok) log(`  strip ${l} failed (${lastLine(r.out)}); kept unstripped`);
    }
  } else {
    log('  no `strip`: the libraries stay unstripped (~200 MB more)');
  }
  link(lib, 'libtensorflow.so', 'libtensorflow_cc.so.2');
  link(lib, 'libtensorflow.so.2', 'libtensorflow_cc.so.2');
  link(lib, 'libtensorflow.so.2.9.1', 'libtensorflow_cc.so.2'); // the marker scripts/install.js checks
  link(lib, 'libtensorflow_framework.so', 'libtensorflow_framework.so.2');

  // 3. --gpu: the CUDA libraries the wheel's and-cuda extra names
  if (opts.gpu) {
    r = run(python, ['-c', CUDA_PY, whl]);
    const specs = r.out
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('nvidia-'));
    if (!r.ok || !specs.length) fail(`could not read the CUDA wheels from ${whl}'s metadata: ${lastLine(r.out)}`);
    log(
      `downloading the CUDA libraries (${specs.length} nvidia-*-cu12 wheels, ~1.8 GB; ~2.9 GB installed) into ${cache}`,
    );
    const files = specs.map((s) => {
      const [n, v] = s.split('==');
      return wheel(pip, n!, v!, cache, null, log);
    });
    r = run(pip[0]!, [
      ...pip.slice(1),
      'install',
      '--no-deps',
      '--no-index',
      '--disable-pip-version-check',
      '--upgrade',
      '--target',
      deps,
      ...files,
    ]);
    if (!r.ok) fail(`pip install --target of the CUDA wheels failed: ${lastLine(r.out)}`);
  }

  // 4. the addon, from source, against the local Node.js headers
  log(`building the addon (node-pre-gyp --build-from-source, Node.js headers from ${nodedir})`);
  const preGyp = createRequire(join(pkgDir, 'package.json')).resolve('@mapbox/node-pre-gyp/bin/node-pre-gyp');
  const gyp = nodeGyp();
  r = run(process.execPath, [preGyp, 'install', '--build-from-source', '--fallback-to-build=false'], {
    cwd: pkgDir,
    env: {
      ...process.env,
      npm_config_nodedir: nodedir,
      ...(gyp ? { npm_config_node_gyp: gyp } : {}),
      PYTHON: process.env.PYTHON ?? python,
    },
  });
  if (!r.ok) fail(`building the addon failed: ${lastLine(r.out)}`);
  writeFileSync(marker, JSON.stringify(want) + '\n');
  const p = probe(f.pkg, root);
  if (!p.ok) {
    rmSync(marker, { force: true });
    fail(`${f.pkg} was built but does not load: ${p.line}`);
  }
  // 5. the fused ops (CPU kernels; the GPU build keeps the composites)
  if (!opts.gpu) buildOps(pkgDir, whl, { python, nodedir, cache, root, log });
  log(`${f.pkg} is set up (${p.line}${opts.gpu ? '' : ', fused ops built'}); ${mb(duBytes(pkgDir))} in ${pkgDir}`);
  return p.line;
}

// ---------------------------------------------------------------------------------------------
// `cogen setup reasoning-gym`: a virtual environment (COGEN_RG_VENV, else <cache>/rg-venv) with
// PyPI's reasoning-gym pinned, then the catalogue of bridged families (bridges/: every dataset's
// curriculum ladder, each level's items checked in the worker, the datasets that do not verify
// listed as excluded), written next to the environment. Idempotent: a set-up bridge whose package
// imports and whose catalogue was built by the pinned version is left as it is.
// ---------------------------------------------------------------------------------------------

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
    await import('../bridges/index.js');
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
  const { loadCatalogue, notSetUpLine } = await import('../bridges/index.js');
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
