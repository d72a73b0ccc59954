// What `cogen setup tensorflow` downloads, pinned: the npm tarball of @tensorflow/tfjs-node (or
// -gpu) and PyPI's TensorFlow wheels, each kept in the cache once fetched, and the Python scripts
// that take the libraries and headers out of a wheel.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fail } from './machine.js';
import { lastLine, mb, run } from './shell.js';

export const TFJS_NODE_VERSION = '4.22.0';
/** 2.15.1: all of tfjs-core's op tests pass on it; 2.21.0 fails int32 round (a kernel bug). */
export const TF_WHEEL_VERSION = '2.15.1';
const PY_TAG = 'cp311';
const PLATFORM = 'manylinux2014_x86_64';

export type Flavour = { pkg: string; wheel: string; approxMb: number };
export const CPU: Flavour = { pkg: '@tensorflow/tfjs-node', wheel: 'tensorflow-cpu', approxMb: 207 };
export const GPU: Flavour = { pkg: '@tensorflow/tfjs-node-gpu', wheel: 'tensorflow', approxMb: 475 };

/** The wheel in the cache, downloaded once (pinned version, Python 3.11 manylinux: whatever python runs pip). */
export function wheel(
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
export function npmTarball(pkg: string, cache: string, log: (l: string) => void): string {
  const file = join(cache, `${pkg.replace(/^@/, '').replace('/', '-')}-${TFJS_NODE_VERSION}.tgz`);
  if (existsSync(file)) return file;
  log(`downloading ${pkg}@${TFJS_NODE_VERSION} from the npm registry (~1 MB tarball; its install script is not run)`);
  const r = run('npm', ['pack', `${pkg}@${TFJS_NODE_VERSION}`, '--pack-destination', cache, '--silent']);
  if (!r.ok || !existsSync(file)) fail(`npm pack ${pkg}@${TFJS_NODE_VERSION} failed: ${lastLine(r.out)}`);
  return file;
}

// Extracts from the wheel: the two libraries, and the headers the binding includes.
export const EXTRACT_PY = String.raw`
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

export const CUDA_PY = String.raw`
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith('.dist-info/METADATA'))
    for line in z.read(meta).decode().splitlines():
        m = re.match(r'Requires-Dist: (nvidia-[A-Za-z0-9_-]+) ?\(?==([0-9.]+)\)? ?; .*extra == .and-cuda.', line)
        if m:
            print(m.group(1) + '==' + m.group(2))
`;
