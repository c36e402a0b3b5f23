import { VendorFailure } from '../../../core/router/failure.js';

// Tasks for test/core/isolation/worker-pool.test.ts, run in the pool's worker threads.

export const tasks = {
  /** The input's bytes reversed, with the thread's id: buffers both ways, and which thread ran it. */
  async reverse(input: { data: Buffer }) {
    const { threadId } = await import('node:worker_threads');
    return { data: Buffer.from(input.data).reverse(), isBuffer: Buffer.isBuffer(input.data), threadId };
  },
  /** The nice value of the thread it runs on. */
  async priority() {
    const { getPriority } = await import('node:os');
    return getPriority();
  },
  /** Never ends and never yields: only terminating the thread stops it. */
  async spin(input: { started: SharedArrayBuffer }) {
    const flag = new Int32Array(input.started);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    for (;;) {}
  },
  /** A refusal the router knows, thrown in the thread. */
  async refuse(input: { message: string }) {
    throw new VendorFailure('client_error', input.message, { status: 422 });
  },
  /** Keeps allocating until the thread's heap bound ends it. */
  async hog() {
    const kept: number[][] = [];
    for (;;) kept.push(Array.from({ length: 100_000 }, (_, i) => i));
  },
};
