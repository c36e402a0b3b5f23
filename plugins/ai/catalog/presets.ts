import type { Preset } from './types.js';

/**
 * Servers that speak OpenAI's chat wire format. A preset is data: adding one is a line here
 * plus its models in models.ts (docs/ai.md, "Adding a preset").
 */
export const PRESETS: Record<string, Preset> = {
  deepseek: { base_url: 'https://api.deepseek.com/v1', regions: ['global'], needs_key: true },
  groq: { base_url: 'https://api.groq.com/openai/v1', regions: ['western'], needs_key: true },
  mistral: { base_url: 'https://api.mistral.ai/v1', regions: ['western'], needs_key: true },
  together: { base_url: 'https://api.together.xyz/v1', regions: ['western'], needs_key: true },
  openrouter: { base_url: 'https://openrouter.ai/api/v1', regions: ['western'], needs_key: true },
  qwen: { base_url: 'https://dashscope.aliyuncs.com/compatible-mode/v1', regions: ['china'], needs_key: true },
  moonshot: { base_url: 'https://api.moonshot.cn/v1', regions: ['china'], needs_key: true },
  zhipu: { base_url: 'https://open.bigmodel.cn/api/paas/v4', regions: ['china'], needs_key: true },
  ollama: { base_url: 'http://127.0.0.1:11434/v1', regions: ['global'], needs_key: false },
  vllm: { base_url: 'http://127.0.0.1:8000/v1', regions: ['global'], needs_key: false },
  llamacpp: { base_url: 'http://127.0.0.1:8080/v1', regions: ['global'], needs_key: false },
};
