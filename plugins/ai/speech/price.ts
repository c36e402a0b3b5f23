import type { AsrInput, AsrOutput, TtsInput } from '../../../core/capabilities/ai/speech.js';

/** Characters as a reader counts them (code points), what per-character prices apply to. */
export function characters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Price of a tts call for one instance: the text is known up front, so estimate and actual agree. */
export function ttsPrice(input: TtsInput, instanceId: string): number {
  const p = input.plan[instanceId];
  if (!p) return 0;
  return Math.ceil((characters(input.text) * p.price_in) / 1_000_000);
}

/** Price of an asr call: the vendor's duration after the call, the gateway's estimate before it. */
export function asrPrice(input: AsrInput, instanceId: string, out?: AsrOutput): number {
  const p = input.plan[instanceId];
  if (!p) return 0;
  const seconds = out?.duration_seconds ?? input.estimate_seconds;
  return Math.ceil((Math.max(0, seconds) * p.price_in) / 60);
}
