import type { ModelEntry } from './types.js';

type Row = [id: string, vendor: string, family: string, tasks: ModelEntry['tasks'], quality: number, context: number, maxOut: number,
  inUsd: number, outUsd: number, caps: ModelEntry['capabilities'], regions?: string[], batch?: [number, number]];

// Prices in USD per million tokens as the vendors list them (converted to micro-USD below);
// quality is a coarse rank for `prefer: smartest`, not a benchmark score.
const ROWS: Row[] = [
  ['gpt-4o', 'openai', 'gpt-4o', ['general', 'coding', 'long_context'], 80, 128000, 16384, 2.5, 10, ['chat', 'tools', 'vision', 'json'], ['western'], [1.25, 5]],
  ['gpt-4o-mini', 'openai', 'gpt-4o', ['general', 'coding'], 60, 128000, 16384, 0.15, 0.6, ['chat', 'tools', 'vision', 'json'], ['western'], [0.075, 0.3]],
  ['gpt-4.1', 'openai', 'gpt-4.1', ['general', 'coding', 'long_context'], 85, 1047576, 32768, 2, 8, ['chat', 'tools', 'vision', 'json'], ['western'], [1, 4]],
  ['o3-mini', 'openai', 'o-series', ['reasoning', 'coding'], 88, 200000, 100000, 1.1, 4.4, ['chat', 'tools', 'json'], ['western'], [0.55, 2.2]],
  ['text-embedding-3-small', 'openai', 'embedding-3', ['general'], 50, 8191, 1, 0.02, 0, ['embed'], ['western'], [0.01, 0]],
  ['text-embedding-3-large', 'openai', 'embedding-3', ['general'], 70, 8191, 1, 0.13, 0, ['embed'], ['western'], [0.065, 0]],
  ['claude-sonnet-4-5', 'anthropic', 'claude-sonnet', ['general', 'coding', 'reasoning', 'long_context'], 92, 200000, 64000, 3, 15, ['chat', 'tools', 'vision', 'json'], ['western'], [1.5, 7.5]],
  ['claude-haiku-4-5', 'anthropic', 'claude-haiku', ['general', 'coding'], 70, 200000, 64000, 1, 5, ['chat', 'tools', 'vision', 'json'], ['western'], [0.5, 2.5]],
  ['claude-opus-4-1', 'anthropic', 'claude-opus', ['reasoning', 'coding', 'long_context'], 95, 200000, 32000, 15, 75, ['chat', 'tools', 'vision', 'json'], ['western'], [7.5, 37.5]],
  ['gemini-2.5-pro', 'gemini', 'gemini-pro', ['reasoning', 'coding', 'long_context', 'general'], 90, 1048576, 65536, 1.25, 10, ['chat', 'tools', 'vision', 'json'], ['western'], [0.625, 5]],
  ['gemini-2.5-flash', 'gemini', 'gemini-flash', ['general', 'coding', 'long_context'], 78, 1048576, 65536, 0.3, 2.5, ['chat', 'tools', 'vision', 'json'], ['western'], [0.15, 1.25]],
  ['gemini-2.0-flash', 'gemini', 'gemini-flash', ['general', 'long_context'], 65, 1048576, 8192, 0.1, 0.4, ['chat', 'tools', 'vision', 'json'], ['western'], [0.05, 0.2]],
  ['gemini-embedding-001', 'gemini', 'gemini-embedding', ['general'], 70, 2048, 1, 0.15, 0, ['embed'], ['western']],
  ['deepseek-chat', 'deepseek', 'deepseek-v3', ['general', 'coding'], 75, 64000, 8192, 0.27, 1.1, ['chat', 'tools', 'json'], ['global']],
  ['deepseek-reasoner', 'deepseek', 'deepseek-r1', ['reasoning'], 85, 64000, 32768, 0.55, 2.19, ['chat', 'json'], ['global']],
  ['llama-3.3-70b-versatile', 'groq', 'llama-3.3', ['general'], 65, 128000, 32768, 0.59, 0.79, ['chat', 'tools', 'json'], ['western']],
  ['meta-llama/llama-4-scout-17b-16e-instruct', 'groq', 'llama-4', ['general'], 62, 131072, 8192, 0.11, 0.34, ['chat', 'tools', 'vision', 'json'], ['western']],
  ['mistral-large-latest', 'mistral', 'mistral-large', ['general', 'coding'], 72, 128000, 8192, 2, 6, ['chat', 'tools', 'json'], ['western']],
  ['mistral-small-latest', 'mistral', 'mistral-small', ['general'], 55, 32000, 8192, 0.2, 0.6, ['chat', 'tools', 'json'], ['western']],
  ['meta-llama/Llama-3.3-70B-Instruct-Turbo', 'together', 'llama-3.3', ['general'], 65, 131072, 8192, 0.88, 0.88, ['chat', 'tools', 'json'], ['western']],
  ['openrouter/auto', 'openrouter', 'openrouter', ['general'], 70, 128000, 8192, 3, 15, ['chat', 'tools', 'json'], ['western']],
  ['qwen-plus', 'qwen', 'qwen', ['general', 'coding', 'long_context'], 74, 131072, 8192, 0.4, 1.2, ['chat', 'tools', 'json'], ['china']],
  ['qwen-max', 'qwen', 'qwen', ['reasoning', 'coding'], 82, 32768, 8192, 1.6, 6.4, ['chat', 'tools', 'json'], ['china']],
  ['moonshot-v1-128k', 'moonshot', 'moonshot', ['long_context', 'general'], 68, 131072, 8192, 2, 5, ['chat', 'tools', 'json'], ['china']],
  ['glm-4-plus', 'zhipu', 'glm-4', ['general', 'coding'], 70, 128000, 4096, 0.7, 0.7, ['chat', 'tools', 'json'], ['china']],
  ['llama3.2', 'ollama', 'llama-3.2', ['general'], 40, 128000, 4096, 0, 0, ['chat', 'tools', 'json'], ['global']],
  ['llama3.2-vision', 'ollama', 'llama-3.2-vision', ['general'], 42, 128000, 4096, 0, 0, ['chat', 'vision'], ['global']],
];

const micros = (usd: number) => Math.round(usd * 1_000_000);

// Image models: USD per image, the dearest size at the quality the adapter asks for (an
// upper bound: gpt-image-1 at `medium`, dall-e-3 at `standard`), so the reservation covers any size.
// Which of them also edit images (OpenAI's /images/edits) and make variations (/images/variations, DALL·E 2 only).
const IMAGE_ROWS: Array<[id: string, vendor: string, quality: number, promptChars: number, usdPerImage: number, regions: string[], also: ModelEntry['capabilities']]> = [
  ['gpt-image-1', 'openai', 85, 32000, 0.063, ['western'], ['image_edit']],
  ['dall-e-3', 'openai', 75, 4000, 0.08, ['western'], []],
  ['dall-e-2', 'openai', 40, 1000, 0.02, ['western'], ['image_edit', 'image_variation']],
];

export const BUILTIN_MODELS: ModelEntry[] = ROWS.map(([id, vendor, family, tasks, quality, context_window, max_output, inUsd, outUsd, capabilities, regions, batch]) => ({
  id, vendor, family, tasks, quality, context_window, max_output, capabilities, regions: regions ?? ['global'],
  price: { in: micros(inUsd), out: micros(outUsd), ...(batch ? { batch_in: micros(batch[0]), batch_out: micros(batch[1]) } : {}) },
}));

export const BUILTIN_IMAGE_MODELS: ModelEntry[] = IMAGE_ROWS.map(([id, vendor, quality, context_window, usd, regions, also]) => ({
  id, vendor, family: id, tasks: ['general'], quality, context_window, max_output: 1, capabilities: ['image', ...also], regions,
  price: { in: 0, out: 0, image: micros(usd) },
}));
