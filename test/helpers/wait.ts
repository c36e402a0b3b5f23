// Waiting in tests: a pause, and a poll for a condition that names what it waited for on timeout.

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `cond` every 10 ms until it holds; after `ms` throws "timed out waiting for <what>". */
export async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
