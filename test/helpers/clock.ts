import type { Tap } from './tap.js';

/**
 * A clock the test moves forward instead of waiting: `Date.now()` (which cooldowns, expiries and
 * leases read) returns the real time plus what `advance` added, so a 30-s retry-after passes in
 * no time and no wait can race a loaded machine. Timers and I/O are untouched. Restored at teardown.
 */
export function shiftedClock(t: Tap): { advance(ms: number): void } {
  const real = Date.now;
  let offset = 0;
  Date.now = () => real() + offset;
  t.teardown(() => {
    Date.now = real;
  });
  return {
    advance(ms: number) {
      offset += ms;
    },
  };
}

/**
 * A clock that stands still until the test moves it: `Date.now()` returns the time it was frozen
 * at plus what `advance` added, so "not yet" holds however long a loaded machine takes between
 * two checks. Timers, I/O and `until`'s limit (on the monotonic clock) are untouched. Restored
 * at teardown.
 */
export function frozenClock(t: Tap): { advance(ms: number): void } {
  const real = Date.now;
  let at = real();
  Date.now = () => at;
  t.teardown(() => {
    Date.now = real;
  });
  return {
    advance(ms: number) {
      at += ms;
    },
  };
}

/**
 * A stopped clock for the decisions that read core/clock.ts `now()` (cron slots, passcode
 * limits), leaving `Date.now()` real, so the jobs engine, leases and the database run as they
 * do; `advance` moves it. Restored at teardown.
 */
export async function frozenNow(t: Tap): Promise<{ now(): number; advance(ms: number): void }> {
  const { setClock } = await import('../../core/clock.js');
  let at = Date.now();
  t.teardown(setClock(() => at));
  return {
    now: () => at,
    advance(ms: number) {
      at += ms;
    },
  };
}
