import { usdMicros, type ModelEntry } from '../../core/kit/vendor.js';

type Row = [
  id: string,
  family: string,
  tasks: ModelEntry['tasks'],
  quality: number,
  context: number,
  maxOut: number,
  inUsd: number,
  outUsd: number,
  caps: ModelEntry['capabilities'],
  batch: [number, number],
];

const FULL: ModelEntry['capabilities'] = ['chat', 'tools', 'vision', 'json'];
const TOOLS_JSON: ModelEntry['capabilities'] = ['chat', 'tools', 'json'];

// Prices in USD per million tokens as OpenAI lists them (converted to micro-USD below);
// quality is a coarse rank for `prefer: smartest`, not a benchmark score.
const CHAT: Row[] = [
  ['gpt-4o', 'gpt-4o', ['general', 'coding', 'long_context'], 80, 128000, 16384, 2.5, 10, FULL, [1.25, 5]],
  ['gpt-4o-mini', 'gpt-4o', ['general', 'coding'], 60, 128000, 16384, 0.15, 0.6, FULL, [0.075, 0.3]],
  ['gpt-4.1', 'gpt-4.1', ['general', 'coding', 'long_context'], 85, 1047576, 32768, 2, 8, FULL, [1, 4]],
  ['o3-mini', 'o-series', ['reasoning', 'coding'], 88, 200000, 100000, 1.1, 4.4, TOOLS_JSON, [0.55, 2.2]],
  ['text-embedding-3-small', 'embedding-3', ['general'], 50, 8191, 1, 0.02, 0, ['embed'], [0.01, 0]],
  ['text-embedding-3-large', 'embedding-3', ['general'], 70, 8191, 1, 0.13, 0, ['embed'], [0.065, 0]],
];

// Image models: USD per image, the dearest size at the quality the adapter asks for (an
// upper bound: gpt-image-1 at `medium`, dall-e-3 at `standard`), so the reservation covers any
// size. Which of them also edit images (/images/edits) and make variations (/images/variations,
// DALL·E 2 only).
type ImageRow = [
  id: string,
  quality: number,
  promptChars: number,
  usdPerImage: number,
  also: ModelEntry['capabilities'],
];
const IMAGE: ImageRow[] = [
  ['gpt-image-1', 85, 32000, 0.063, ['image_edit']],
  ['dall-e-3', 75, 4000, 0.08, []],
  ['dall-e-2', 40, 1000, 0.02, ['image_edit', 'image_variation']],
];

// Speech: tts in USD per million input characters, asr in USD per minute of audio.
// gpt-4o-mini-tts and the gpt-4o transcribe models are billed by OpenAI in tokens; the rows
// carry OpenAI's own per-minute / per-character estimates so a call's cost is known before it is made.
const SPEECH: Array<[id: string, family: string, kind: 'tts' | 'asr', quality: number, usd: number]> = [
  ['tts-1', 'tts-1', 'tts', 60, 15],
  ['tts-1-hd', 'tts-1', 'tts', 75, 30],
  ['gpt-4o-mini-tts', 'gpt-4o-tts', 'tts', 80, 15],
  ['whisper-1', 'whisper', 'asr', 70, 0.006],
  ['gpt-4o-transcribe', 'gpt-4o-transcribe', 'asr', 85, 0.006],
  ['gpt-4o-mini-transcribe', 'gpt-4o-transcribe', 'asr', 75, 0.003],
];

const vendor = 'openai';
const regions = ['western'];

/** OpenAI's catalog rows: chat and embeddings, then images, then speech (the order /v1/models lists). */
export const OPENAI_MODELS: ModelEntry[] = [
  ...CHAT.map(([id, family, tasks, quality, context_window, max_output, inUsd, outUsd, capabilities, batch]) => ({
    id,
    vendor,
    family,
    tasks,
    quality,
    context_window,
    max_output,
    capabilities,
    regions,
    price: {
      in: usdMicros(inUsd),
      out: usdMicros(outUsd),
      batch_in: usdMicros(batch[0]),
      batch_out: usdMicros(batch[1]),
    },
  })),
  ...IMAGE.map(
    ([id, quality, context_window, usd, also]): ModelEntry => ({
      id,
      vendor,
      family: id,
      tasks: ['general'],
      quality,
      context_window,
      max_output: 1,
      capabilities: ['image', ...also],
      regions,
      price: { in: 0, out: 0, image: usdMicros(usd) },
    })
  ),
  // context_window is the longest input: characters for tts, seconds of audio for asr.
  ...SPEECH.map(
    ([id, family, kind, quality, usd]): ModelEntry => ({
      id,
      vendor,
      family,
      tasks: ['general'],
      quality,
      context_window: kind === 'tts' ? 4096 : 1500,
      max_output: 1,
      price: {
        in: 0,
        out: 0,
        ...(kind === 'tts' ? { per_million_chars: usdMicros(usd) } : { per_minute: usdMicros(usd) }),
      },
      capabilities: [kind],
      regions,
    })
  ),
];
