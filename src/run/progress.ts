// The live progress bar of `cogen run`: one redrawn line on a TTY, a plain line every few steps
// otherwise (logs, CI), always on stderr so stdout stays clean for --json.
import type { StepProgress } from './loop.js';

export function createProgress(stream: NodeJS.WriteStream = process.stderr): {
  update(p: StepProgress): void;
  done(): void;
} {
  const tty = Boolean(stream.isTTY);
  let lastPrinted = 0;
  return {
    update(p) {
      const frac = p.step / p.steps;
      const eta = p.step > 0 ? (p.elapsedMs / p.step) * (p.steps - p.step) : 0;
      const width = 24;
      const filled = Math.round(frac * width);
      const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
      const text =
        `${bar} step ${p.step}/${p.steps}  reward ${p.meanReward.toFixed(3)}  solve ${(100 * p.solveRate).toFixed(1)}%  ` +
        `level ${p.frontierLevel.toFixed(2)}  ${p.tasksPerSecond.toFixed(1)} tasks/s  skills ${p.skillsMastered}  ` +
        `ETA ${formatDuration(eta)}${p.graphBacklog > 0 ? `  graph backlog ${p.graphBacklog}` : ''}`;
      if (tty) {
        stream.write(`\r\x1b[2K${text}`);
      } else if (p.step === p.steps || Date.now() - lastPrinted > 5000 || p.step === 1) {
        lastPrinted = Date.now();
        stream.write(`${text}\n`);
      }
    },
    done() {
      if (tty) stream.write('\n');
    },
  };
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
