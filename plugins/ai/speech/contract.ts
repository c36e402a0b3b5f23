import type { CandidatePlan } from '../contract.js';

// The capability contracts of speech: `ai.tts` (TtsInput -> TtsOutput) and `ai.asr`
// (AsrInput -> AsrOutput). Plans reuse CandidatePlan: `price_in` is micro-USD per million
// characters for tts and micro-USD per minute of audio for asr; `price_out` is unused.

/** Audio encodings a tts vendor may be asked for; `ogg` is Opus in an Ogg container. */
export const TTS_FORMATS = ['mp3', 'wav', 'ogg', 'pcm', 'aac', 'flac'] as const;
export type TtsFormat = (typeof TTS_FORMATS)[number];

/** Content types of the tts formats; `pcm` is raw 16-bit little-endian mono samples. */
export const TTS_MIME: Record<TtsFormat, string> = {
  mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', pcm: 'audio/pcm', aac: 'audio/aac', flac: 'audio/flac',
};

export interface TtsInput {
  text: string;
  voice?: string;
  format: TtsFormat;
  /** 0.25 to 4; the vendor's default (1) when absent. */
  speed?: number;
  /** Style instructions for models that take them (gpt-4o-mini-tts). */
  instructions?: string;
  plan: Record<string, CandidatePlan>;
}

export interface TtsOutput {
  audio: Buffer;
  format: TtsFormat;
  model: string;
}

export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

export interface AsrInput {
  audio: Buffer;
  /** A name with the extension of the audio's container (vendors read the format from it). */
  filename: string;
  mime: string;
  /** ISO-639-1 hint. */
  language?: string;
  prompt?: string;
  /** Seconds of audio the gateway measured or bounded from the bytes: reserved, and settled when the vendor names none. */
  estimate_seconds: number;
  plan: Record<string, CandidatePlan>;
}

export interface AsrOutput {
  text: string;
  /** ISO-639-1 code when the vendor names one it recognises. */
  language?: string;
  /** Seconds of audio as the vendor measured them (what it bills). */
  duration_seconds?: number;
  segments?: TranscriptSegment[];
  model: string;
}

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
