import type { CandidatePlan, Usage } from './chat.js';
import type { ImageOutput } from './image.js';
import type { AsrOutput } from './speech.js';

// What a candidate's plan costs, in the vendor's micro-USD: pure arithmetic both sides need. The
// area prices its estimate with it; an adapter's price() answers with it from its own plan.

/**
 * The plan the router handed an adapter: without one the area called the capability without
 * its planner, a bug, and an adapter must not guess a model or whose key to use.
 */
export function planOf<P>(plan: P | undefined, instanceId: string): P {
  if (!plan) throw new Error(`no plan for vendor instance ${instanceId}`);
  return plan;
}

/** Price of a chat or embed call: the usage given (the estimate before the call, the actual after). */
export function tokenPrice(plan: CandidatePlan | undefined, usage: Usage): number {
  if (!plan) return 0;
  return Math.ceil((usage.input_tokens * plan.price_in + usage.output_tokens * plan.price_out) / 1_000_000);
}

/** Price of an image call: per image × the images asked for (estimate) or made (actual, never above the estimate). */
export function imagePrice(plan: CandidatePlan | undefined, n: number, out?: ImageOutput): number {
  if (!plan) return 0;
  return (plan.price_image ?? 0) * (out ? Math.min(out.images.length, n) : n);
}

/** Characters as a reader counts them (code points), what per-character prices apply to. */
export function characters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Price of a tts call: the text is known up front, so estimate and actual agree. */
export function ttsPrice(plan: CandidatePlan | undefined, text: string): number {
  if (!plan) return 0;
  return Math.ceil((characters(text) * plan.price_in) / 1_000_000);
}

/** Price of an asr call: the vendor's duration after the call, the gateway's estimate before it. */
export function asrPrice(plan: CandidatePlan | undefined, estimateSeconds: number, out?: AsrOutput): number {
  if (!plan) return 0;
  const seconds = out?.duration_seconds ?? estimateSeconds;
  return Math.ceil((Math.max(0, seconds) * plan.price_in) / 60);
}
