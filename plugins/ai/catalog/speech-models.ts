import type { ModelEntry } from './types.js';

type Row = [id: string, vendor: string, family: string, kind: 'tts' | 'asr', quality: number, usd: number];

// Speech models. tts is priced in USD per million input characters, asr in USD per minute of
// audio, as the vendors list them (converted to micro-USD below). gpt-4o-mini-tts and the
// gpt-4o transcribe models are billed by OpenAI in tokens; the rows carry OpenAI's own
// per-minute / per-character estimates so a call's cost is known before it is made.
const ROWS: Row[] = [
  ['tts-1', 'openai', 'tts-1', 'tts', 60, 15],
  ['tts-1-hd', 'openai', 'tts-1', 'tts', 75, 30],
  ['gpt-4o-mini-tts', 'openai', 'gpt-4o-tts', 'tts', 80, 15],
  ['whisper-1', 'openai', 'whisper', 'asr', 70, 0.006],
  ['gpt-4o-transcribe', 'openai', 'gpt-4o-transcribe', 'asr', 85, 0.006],
  ['gpt-4o-mini-transcribe', 'openai', 'gpt-4o-transcribe', 'asr', 75, 0.003],
];

const micros = (usd: number) => Math.round(usd * 1_000_000);

/** context_window is the longest input: characters for tts, seconds of audio for asr. */
export const SPEECH_MODELS: ModelEntry[] = ROWS.map(([id, vendor, family, kind, quality, usd]) => ({
  id, vendor, family, tasks: ['general'], quality, context_window: kind === 'tts' ? 4096 : 1500, max_output: 1,
  price: { in: 0, out: 0, ...(kind === 'tts' ? { per_million_chars: micros(usd) } : { per_minute: micros(usd) }) },
  capabilities: [kind], regions: ['western'],
}));
