import { performance, type EventLoopUtilization } from 'node:perf_hooks';

// V8 collects the old generation when it nears a limit it sizes from the live heap, and the CLI
// starts that limit high (`--initial-old-space-size=128`: fewer collections while images are
// resized). After a burst of heavy calls the garbage of that burst is then kept, and with it
// the RSS (bench/stall: 286 -> 381 MiB a minute after the heavy phases, flat while idle). A
// process that has been idle for a while, with garbage to spare, collects once: the memory comes
// back when nobody is waiting, and nothing changes under load.

/** An idle window's event loop may be busy this share of the time (timers, a cron tick). */
const MAX_UTILIZATION = 0.05;

export interface IdleGcOptions {
  /** How often to look; a window this long with a quiet loop runs one collection. */
  everyMs: number;
  /** Collect only when the heap grew this much since the last collection here. */
  minGrowthBytes: number;
  gc: () => void;
  heapUsed?: () => number;
  utilization?: (since: EventLoopUtilization) => { now: EventLoopUtilization; utilization: number };
}

const loopUtilization = (since: EventLoopUtilization) => {
  const now = performance.eventLoopUtilization();
  return { now, utilization: performance.eventLoopUtilization(now, since).utilization };
};

/** One full collection after each busy spell, once the loop has been quiet for a window. */
export class IdleCollector {
  readonly #o: Required<IdleGcOptions>;
  #since: EventLoopUtilization;
  #floor: number;
  #timer?: NodeJS.Timeout;
  collections = 0;

  constructor(opts: IdleGcOptions) {
    this.#o = {
      heapUsed: () => process.memoryUsage().heapUsed,
      utilization: loopUtilization,
      ...opts,
    };
    this.#since = this.#o.utilization(performance.eventLoopUtilization()).now;
    this.#floor = this.#o.heapUsed();
  }

  start(): void {
    this.#timer = setInterval(() => this.tick(), this.#o.everyMs);
    this.#timer.unref();
  }

  /** One look: collects (and answers true) when the last window was quiet and the heap has grown. */
  tick(): boolean {
    const { now, utilization } = this.#o.utilization(this.#since);
    this.#since = now;
    if (utilization > MAX_UTILIZATION) return false;
    if (this.#o.heapUsed() - this.#floor < this.#o.minGrowthBytes) return false;
    this.#o.gc();
    this.collections++;
    this.#floor = this.#o.heapUsed();
    this.#since = this.#o.utilization(this.#since).now; // the collection's own time is not load
    return true;
  }

  close(): void {
    clearInterval(this.#timer);
  }
}

/** `globalThis.gc` when node runs with --expose-gc (the CLI's flags), else undefined: idle collection is off. */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? () => (gc as () => void)() : undefined;
}
