// The solver's fused ops (src/solver/accel/tf-ops.cc and tf-decode.cc) for the CPU package: compiled
// against the TensorFlow wheel's C++ headers (extracted once into the cache) into
// deps/lib/cogen_tf_ops.node, built again when their sources, the wheel or the flags change.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TF_OPS_ADDON, tfOpsPath } from '../solver/accel/index.js';
import { fail } from './machine.js';
import { lastLine, run } from './shell.js';
import { CPU, TF_WHEEL_VERSION } from './wheels.js';

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
  fileURLToPath(new URL(`../solver/accel/${f}`, import.meta.url)),
);
const OPS_HEADER = fileURLToPath(new URL('../solver/accel/tf-ops.h', import.meta.url));
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
export const opsBuilt = (pkgDir: string): boolean =>
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
export function buildOps(
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
