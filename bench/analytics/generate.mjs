// Deterministic events for the analytics bench: `people` persons, each a session of steps of a
// four-step funnel (with drop-off) plus noise events, spread over 30 days.

export const FUNNEL = ['signup', 'activate', 'invite', 'purchase'];
const NOISE = ['pageview', 'click', 'scroll'];
export const START_MS = Date.UTC(2026, 0, 1);

/** A small linear congruential generator: the same events on every run and in every process. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Calls `emit(event, distinctId, tsMs, plan)` `total` times: ~total/people events a person. */
export function generateEvents(total, people, emit) {
  const rand = rng(42);
  const per = Math.max(1, Math.floor(total / people));
  let n = 0;
  for (let p = 0; p < people && n < total; p++) {
    const id = `u${p}`;
    const plan = rand() < 0.5 ? 'free' : 'pro';
    let t = START_MS + Math.floor(rand() * 30 * 86_400_000);
    let step = 0;
    for (let i = 0; i < per && n < total; i++, n++) {
      t += 1 + Math.floor(rand() * 3_600_000);
      let event = NOISE[Math.floor(rand() * NOISE.length)];
      if (step < FUNNEL.length && rand() < 0.6 - step * 0.1) event = FUNNEL[step++];
      emit(event, id, t, plan);
    }
  }
  return n;
}
