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
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkPrerequisites, fail, nodeGyp, nodeModulesDir } from './machine.js';
import { buildOps, opsBuilt } from './ops.js';
import { duBytes, lastLine, link, mb, run } from './shell.js';
import {
  CPU,
  CUDA_PY,
  EXTRACT_PY,
  GPU,
  TFJS_NODE_VERSION,
  TF_WHEEL_VERSION,
  npmTarball,
  wheel,
  type Flavour,
} from './wheels.js';

export interface SetupOptions {
  gpu?: boolean;
  log?: (line: string) => void;
  /** where wheels and the npm tarball are kept (default ~/.cache/cogen, or COGEN_CACHE_DIR) */
  cacheDir?: string;
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
    const line = setUpAlready(f, opts, { root, pkgDir, log });
    if (line !== null) return line;
  }
  const { pip, nodedir, python } = checkPrerequisites();
  const cache = cacheDir(opts);
  mkdirSync(cache, { recursive: true });

  // 1. the npm package, without its install script
  placePackage(f.pkg, { nm, root, pkgDir, cache, log });
  // 2. the TensorFlow C libraries and headers from the wheel
  const whl = wheel(pip, f.wheel, TF_WHEEL_VERSION, cache, f.approxMb, log);
  extractLibraries(python, whl, deps, log);
  // 3. --gpu: the CUDA libraries the wheel's and-cuda extra names
  if (opts.gpu) installCuda({ pip, python, whl, deps, cache, log });
  // 4. the addon, from source, against the local Node.js headers
  buildAddon(pkgDir, { nodedir, python, log });
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

const cacheDir = (opts: SetupOptions): string =>
  opts.cacheDir ?? process.env.COGEN_CACHE_DIR ?? join(homedir(), '.cache', 'cogen');

/**
 * A package set up by this version of setup: when it loads, its fused ops are built again if their
 * sources changed, and the probe's line is returned; null when it does not load (build it again).
 */
function setUpAlready(
  f: Flavour,
  opts: SetupOptions,
  o: { root: string; pkgDir: string; log: (l: string) => void },
): string | null {
  const p = probe(f.pkg, o.root);
  if (p.ok) {
    if (!opts.gpu && !opsBuilt(o.pkgDir)) {
      const { pip, nodedir, python } = checkPrerequisites();
      const cache = cacheDir(opts);
      buildOps(o.pkgDir, wheel(pip, f.wheel, TF_WHEEL_VERSION, cache, f.approxMb, o.log), {
        python,
        nodedir,
        cache,
        root: o.root,
        log: o.log,
      });
    }
    o.log(`${f.pkg} is set up (${p.line}${opts.gpu ? '' : ', fused ops built'}); nothing more to do`);
    return p.line;
  }
  o.log(`${f.pkg} is set up but does not load (${p.line}); building it again`);
  return null;
}

/** Step 1: the npm package from its tarball into pkgDir, its missing dependencies installed without saving them. */
function placePackage(
  pkg: string,
  o: { nm: string; root: string; pkgDir: string; cache: string; log: (l: string) => void },
): void {
  const { nm, root, pkgDir, cache, log } = o;
  const tgz = npmTarball(pkg, cache, log);
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
    if (!r.ok) fail(`npm install of ${pkg}'s dependencies failed: ${lastLine(r.out)}`);
  }
  rmSync(pkgDir, { recursive: true, force: true });
  mkdirSync(dirname(pkgDir), { recursive: true });
  r = run('mv', [join(tmp, 'package'), pkgDir]);
  rmSync(tmp, { recursive: true, force: true });
  if (!r.ok) fail(`could not place ${pkg}: ${lastLine(r.out)}`);
}

/** Step 2: the two libraries (stripped) and the C API headers from the wheel into deps/, and the links the installer expects. */
function extractLibraries(python: string, whl: string, deps: string, log: (l: string) => void): void {
  log(`extracting libtensorflow_cc.so.2, libtensorflow_framework.so.2 and the C API headers into ${deps}`);
  let r = run(python, ['-c', EXTRACT_PY, whl, deps]);
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
}

/** Step 3 (--gpu): the nvidia-*-cu12 wheels the tensorflow wheel names for its and-cuda extra, installed into deps/. */
function installCuda(o: {
  pip: string[];
  python: string;
  whl: string;
  deps: string;
  cache: string;
  log: (l: string) => void;
}): void {
  const { pip, python, whl, deps, cache, log } = o;
  let r = run(python, ['-c', CUDA_PY, whl]);
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

/** Step 4: the addon built from source by node-pre-gyp against the local Node.js headers. */
function buildAddon(pkgDir: string, o: { nodedir: string; python: string; log: (l: string) => void }): void {
  const { nodedir, python, log } = o;
  log(`building the addon (node-pre-gyp --build-from-source, Node.js headers from ${nodedir})`);
  const preGyp = createRequire(join(pkgDir, 'package.json')).resolve('@mapbox/node-pre-gyp/bin/node-pre-gyp');
  const gyp = nodeGyp();
  const r = run(process.execPath, [preGyp, 'install', '--build-from-source', '--fallback-to-build=false'], {
    cwd: pkgDir,
    env: {
      ...process.env,
      npm_config_nodedir: nodedir,
      ...(gyp ? { npm_config_node_gyp: gyp } : {}),
      PYTHON: process.env.PYTHON ?? python,
    },
  });
  if (!r.ok) fail(`building the addon failed: ${lastLine(r.out)}`);
}
