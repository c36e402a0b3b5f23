import type { RealtimePlan, RealtimeTokenInput } from '../../core/capabilities/ai/realtime.js';

/** The plan the area gave one instance for a live-session token. */
export function realtimePlanFor(input: RealtimeTokenInput, instanceId: string): RealtimePlan {
  const p = input.plan[instanceId];
  if (!p) throw new Error(`no realtime plan for vendor instance ${instanceId}`);
  return p;
}
