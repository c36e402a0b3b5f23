import { usdMicros, type ModelEntry, type Preset } from '../../core/kit/vendor.js';

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
];

type Server = Omit<Preset, 'models'> & { rows: Row[] };

const CTJ: ModelEntry['capabilities'] = ['chat', 'tools', 'json'];

/**
 * Servers that speak OpenAI's chat wire format. A preset is data: its address, regions,
 * whether it takes a key, and its models with prices in USD per million tokens as the vendor
 * lists them (docs/ai.md, "Adding a preset"). Quality is a coarse rank for `prefer: smartest`.
 */
const SERVERS: Record<string, Server> = {
  deepseek: {
    base_url: 'https://api.deepseek.com/v1',
    regions: ['global'],
    needs_key: true,
    rows: [
      ['deepseek-chat', 'deepseek-v3', ['general', 'coding'], 75, 64000, 8192, 0.27, 1.1, CTJ],
      ['deepseek-reasoner', 'deepseek-r1', ['reasoning'], 85, 64000, 32768, 0.55, 2.19, ['chat', 'json']],
    ],
  },
  groq: {
    base_url: 'https://api.groq.com/openai/v1',
    regions: ['western'],
    needs_key: true,
    rows: [
      ['llama-3.3-70b-versatile', 'llama-3.3', ['general'], 65, 128000, 32768, 0.59, 0.79, CTJ],
      [
        'meta-llama/llama-4-scout-17b-16e-instruct',
        'llama-4',
        ['general'],
        62,
        131072,
        8192,
        0.11,
        0.34,
        ['chat', 'tools', 'vision', 'json'],
      ],
    ],
  },
  mistral: {
    base_url: 'https://api.mistral.ai/v1',
    regions: ['western'],
    needs_key: true,
    rows: [
      ['mistral-large-latest', 'mistral-large', ['general', 'coding'], 72, 128000, 8192, 2, 6, CTJ],
      ['mistral-small-latest', 'mistral-small', ['general'], 55, 32000, 8192, 0.2, 0.6, CTJ],
    ],
  },
  together: {
    base_url: 'https://api.together.xyz/v1',
    regions: ['western'],
    needs_key: true,
    rows: [['meta-llama/Llama-3.3-70B-Instruct-Turbo', 'llama-3.3', ['general'], 65, 131072, 8192, 0.88, 0.88, CTJ]],
  },
  openrouter: {
    base_url: 'https://openrouter.ai/api/v1',
    regions: ['western'],
    needs_key: true,
    rows: [['openrouter/auto', 'openrouter', ['general'], 70, 128000, 8192, 3, 15, CTJ]],
  },
  qwen: {
    base_url: 'https://dashscope.aliyuncs.com/compatible-mode/v1',
    regions: ['china'],
    needs_key: true,
    rows: [
      ['qwen-plus', 'qwen', ['general', 'coding', 'long_context'], 74, 131072, 8192, 0.4, 1.2, CTJ],
      ['qwen-max', 'qwen', ['reasoning', 'coding'], 82, 32768, 8192, 1.6, 6.4, CTJ],
    ],
  },
  moonshot: {
    base_url: 'https://api.moonshot.cn/v1',
    regions: ['china'],
    needs_key: true,
    rows: [['moonshot-v1-128k', 'moonshot', ['long_context', 'general'], 68, 131072, 8192, 2, 5, CTJ]],
  },
  zhipu: {
    base_url: 'https://open.bigmodel.cn/api/paas/v4',
    regions: ['china'],
    needs_key: true,
    rows: [['glm-4-plus', 'glm-4', ['general', 'coding'], 70, 128000, 4096, 0.7, 0.7, CTJ]],
  },
  // Local servers: no key, no price; vLLM and llama.cpp serve whatever the operator loaded.
  ollama: {
    base_url: 'http://127.0.0.1:11434/v1',
    regions: ['global'],
    needs_key: false,
    rows: [
      ['llama3.2', 'llama-3.2', ['general'], 40, 128000, 4096, 0, 0, CTJ],
      ['llama3.2-vision', 'llama-3.2-vision', ['general'], 42, 128000, 4096, 0, 0, ['chat', 'vision']],
    ],
  },
  vllm: { base_url: 'http://127.0.0.1:8000/v1', regions: ['global'], needs_key: false, rows: [] },
  llamacpp: { base_url: 'http://127.0.0.1:8080/v1', regions: ['global'], needs_key: false, rows: [] },
};

/** The presets with their catalog rows, each row's `vendor` the preset's name. */
export const PRESETS: Record<string, Preset> = Object.fromEntries(
  Object.entries(SERVERS).map(([name, server]) => {
    const { rows, ...where } = server;
    const models = rows.map(
      ([id, family, tasks, quality, context_window, max_output, inUsd, outUsd, capabilities]) => ({
        id,
        vendor: name,
        family,
        tasks,
        quality,
        context_window,
        max_output,
        capabilities,
        regions: where.regions,
        price: { in: usdMicros(inUsd), out: usdMicros(outUsd) },
      })
    );
    return [name, { ...where, models }];
  })
);
