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
  batch: [number, number],
];

const ALL_TASKS: ModelEntry['tasks'] = ['general', 'coding', 'reasoning', 'long_context'];

// USD per million tokens as Anthropic lists them; quality is a coarse rank for `prefer: smartest`.
const ROWS: Row[] = [
  ['claude-sonnet-4-5', 'claude-sonnet', ALL_TASKS, 92, 200000, 64000, 3, 15, [1.5, 7.5]],
  ['claude-haiku-4-5', 'claude-haiku', ['general', 'coding'], 70, 200000, 64000, 1, 5, [0.5, 2.5]],
  ['claude-opus-4-1', 'claude-opus', ['reasoning', 'coding', 'long_context'], 95, 200000, 32000, 15, 75, [7.5, 37.5]],
];

/** Anthropic's catalog rows. */
export const ANTHROPIC_MODELS: ModelEntry[] = ROWS.map(
  ([id, family, tasks, quality, context_window, max_output, inUsd, outUsd, b]) => ({
    id,
    vendor: 'anthropic',
    family,
    tasks,
    quality,
    context_window,
    max_output,
    capabilities: ['chat', 'tools', 'vision', 'json'],
    regions: ['western'],
    price: { in: usdMicros(inUsd), out: usdMicros(outUsd), batch_in: usdMicros(b[0]), batch_out: usdMicros(b[1]) },
  })
);
