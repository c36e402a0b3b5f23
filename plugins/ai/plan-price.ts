import type { CandidatePlan, Usage } from '../../core/capabilities/ai/chat.js';
import type { ImageOutput } from '../../core/capabilities/ai/image.js';

// What a candidate was planned to do and what that costs, read by the adapters from the plan
// the area's planner put in the call's input.

/** Price of a chat or embed call for one instance: the estimate when no output yet, else the actual usage. */
export function planPrice(input: { plan: Record<string, CandidatePlan>; estimate: Usage }, instanceId: string, usage?: Usage): number {
  const p = input.plan[instanceId];
  if (!p) return 0;
  const u = usage ?? input.estimate;
  return Math.ceil((u.input_tokens * p.price_in + u.output_tokens * p.price_out) / 1_000_000);
}

export function planFor(input: { plan: Record<string, CandidatePlan> }, instanceId: string): CandidatePlan {
  const p = input.plan[instanceId];
  if (!p) throw new Error(`no plan for vendor instance ${instanceId}`);
  return p;
}

/** Price of an image call for one instance: per image × the images asked for (estimate) or made (actual, never above the estimate). */
export function imagePrice(input: { n: number; plan: Record<string, CandidatePlan> }, instanceId: string, out?: ImageOutput): number {
  const p = input.plan[instanceId];
  if (!p) return 0;
  return (p.price_image ?? 0) * (out ? Math.min(out.images.length, input.n) : input.n);
}
