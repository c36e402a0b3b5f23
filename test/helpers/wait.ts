// Waiting in tests: a pause, and a poll for a condition that names what it waited for on timeout.

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `cond` every 10 ms until it holds; after `ms` throws "timed out waiting for <what>". The
 * limit is kept on the monotonic clock, so it still runs out under a test's fake `Date.now`.
 */
export async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Whether `p` settles within the microtasks that follow: no timer, I/O or worker message can run
 * in between, so "rejected at once, not after the work" is checked without a clock. Call it in
 * the same turn as the event (an abort) that should settle `p`.
 */
export async function settlesAtOnce(p: Promise<unknown>, microtasks = 100): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true)
  );
  for (let i = 0; i < microtasks && !done; i++) await Promise.resolve();
  return done;
}
