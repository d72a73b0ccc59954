// The one Python with torch that the benches' PyTorch peers and the Python examples share: a venv
// in ~/.cache/cogen/torch-venv, made when asked (`--setup-torch`). torch's Linux wheel pulls about
// 3 GB of nvidia-* wheels and takes minutes, so CI never makes it. TORCH_PYTHON overrides it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const TORCH_VENV = join(homedir(), '.cache', 'cogen', 'torch-venv');
/** What the venv holds: torch as bench/results/*.md report it, numpy beside it. */
const PACKAGES = ['torch==2.15.0', 'numpy'];

const hasTorch = (python: string): boolean =>
  spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

/**
 * A Python that imports torch: TORCH_PYTHON, else the shared venv (made first when `setup`).
 * Null, with why and how to get one, when there is none.
 */
export function torchPython(
  setup = false,
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): { python: string } | { error: string } {
  if (process.env.TORCH_PYTHON) {
    return hasTorch(process.env.TORCH_PYTHON)
      ? { python: process.env.TORCH_PYTHON }
      : { error: `TORCH_PYTHON=${process.env.TORCH_PYTHON} cannot import torch` };
  }
  const python = join(TORCH_VENV, 'bin', 'python');
  if (existsSync(python) && hasTorch(python)) return { python };
  if (!setup)
    return {
      error: `no Python with torch: run the bench with --setup-torch once (a venv in ${TORCH_VENV}, ~3 GB), or set TORCH_PYTHON`,
    };
  log(`making ${TORCH_VENV} with ${PACKAGES.join(', ')} (several GB, minutes)`);
  const steps: [string, string[]][] = [
    ['python3', ['-m', 'venv', TORCH_VENV]],
    [python, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', ...PACKAGES]],
  ];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { stdio: 'inherit' });
    if (r.status !== 0) return { error: `${cmd} ${args.join(' ')} failed (exit ${r.status})` };
  }
  return hasTorch(python) ? { python } : { error: `${python} cannot import torch after the install` };
}
