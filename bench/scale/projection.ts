// The throughput model of bench:scale (docs/scale-out.md): measured CPU costs per reward, turned
// into rewards/s for N workers. Three things bound it: the workers (each one's main thread, and its
// sandbox threads together), the coordinator (its main thread; and its machine's cores, which also
// run NATS), and, when everything shares one machine as in this bench, that machine's cores.
export interface PhaseCosts {
  rate: number;
  /** Seconds per 1,000 rewards: the coordinator's main thread busy, and the CPU of each process kind (all threads). */
  mainPer1000: number;
  replicaCpuPer1000: number;
  workerCpuPer1000: number;
  workerMainPer1000: number;
  natsCpuPer1000: number;
  clientCpuPer1000: number;
  /** Sandbox threads per worker. */
  sandboxThreads: number;
  workers: number;
  /** Cores this bench's processes had during the phase: their own CPU plus the machine's idle time, per second (other jobs took the rest). */
  availableCores: number;
}

export interface Bound {
  rate: number;
  bound: string;
}

export function project(base: PhaseCosts, cores: number) {
  const k = (x: number) => x / 1000;
  const m = k(base.mainPer1000);
  const r = k(base.replicaCpuPer1000);
  const q = k(base.natsCpuPer1000);
  const c = k(base.clientCpuPer1000);
  // One worker's costs (the phase's workers share the rewards).
  const w = k(base.workerCpuPer1000);
  const wm = k(base.workerMainPer1000);
  const perWorker = 1 / Math.max(wm, (w - wm) / base.sandboxThreads);
  const min = (...bs: Bound[]): Bound => bs.reduce((a, b) => (b.rate < a.rate ? b : a));
  const coordinator = min(
    { rate: 1 / m, bound: "the coordinator's main thread" },
    { rate: cores / (r + q), bound: `the coordinator's ${cores} cores (replica and NATS)` },
  );
  return {
    perWorker,
    /** Everything on one machine that gives these processes `available` cores (as measured in the phase predicted). */
    sameMachine: (n: number, available: number): number =>
      min(
        { rate: n * perWorker, bound: 'workers' },
        { rate: 1 / m, bound: 'main' },
        { rate: available / (r + w + q + c), bound: 'cores' },
      ).rate,
    /** Each worker on a machine of its own (of `cores` cores); clients elsewhere. */
    dedicated: (n: number): Bound => min({ rate: n * perWorker, bound: `${n} workers` }, coordinator),
    saturation: { ...coordinator, workers: coordinator.rate / perWorker },
  };
}
