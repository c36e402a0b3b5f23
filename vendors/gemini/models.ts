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
  batch?: [number, number],
];

const FULL: ModelEntry['capabilities'] = ['chat', 'tools', 'vision', 'json'];
const LONG = 1048576;

// USD per million tokens as Google lists them; quality is a coarse rank for `prefer: smartest`.
const ROWS: Row[] = [
  [
    'gemini-2.5-pro',
    'gemini-pro',
    ['reasoning', 'coding', 'long_context', 'general'],
    90,
    LONG,
    65536,
    1.25,
    10,
    FULL,
    [0.625, 5],
  ],
  [
    'gemini-2.5-flash',
    'gemini-flash',
    ['general', 'coding', 'long_context'],
    78,
    LONG,
    65536,
    0.3,
    2.5,
    FULL,
    [0.15, 1.25],
  ],
  ['gemini-2.0-flash', 'gemini-flash', ['general', 'long_context'], 65, LONG, 8192, 0.1, 0.4, FULL, [0.05, 0.2]],
  ['gemini-embedding-001', 'gemini-embedding', ['general'], 70, 2048, 1, 0.15, 0, ['embed']],
];

const batchPrice = (b?: [number, number]) => (b ? { batch_in: usdMicros(b[0]), batch_out: usdMicros(b[1]) } : {});

/** Gemini's catalog rows. */
export const GEMINI_MODELS: ModelEntry[] = ROWS.map(
  ([id, family, tasks, quality, context_window, max_output, inUsd, outUsd, caps, b]) => ({
    id,
    vendor: 'gemini',
    family,
    tasks,
    quality,
    context_window,
    max_output,
    capabilities: caps,
    regions: ['western'],
    price: { in: usdMicros(inUsd), out: usdMicros(outUsd), ...batchPrice(b) },
  })
);
