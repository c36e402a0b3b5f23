import { Type } from '@sinclair/typebox';
import { defineVendor, secret } from '../../core/kit/vendor.js';
import { PRESETS } from './presets.js';
import { openAiInstance } from '../openai/client.js';

/**
 * Any server speaking OpenAI's chat wire format: a `preset` (DeepSeek, Groq, Mistral,
 * Together, OpenRouter, Qwen/DashScope, Moonshot, Zhipu, Ollama, vLLM, llama.cpp) fills in the
 * base URL, models and prices from data; `base_url` and `models` override it. Chat, streaming,
 * embeddings, and vision for the catalog's models with `vision`.
 */
export default defineVendor({
  name: 'openai-compatible',
  regions: ['global'],
  presets: PRESETS,
  configSchema: Type.Object(
    {
      preset: Type.Optional(
        Type.Union(
          Object.keys(PRESETS).map((k) => Type.Literal(k)),
          { description: 'A known server; sets base_url, models and prices.' }
        )
      ),
      base_url: Type.Optional(Type.String({ description: 'Required without a preset.' })),
      api_key: secret(Type.String({ default: '' })),
      models: Type.Optional(Type.Array(Type.String())),
      headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    },
    { additionalProperties: false }
  ),
  byok: {
    provider: 'openai-compatible',
    credentials: Type.Object({ api_key: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  },
  create(config, ctx) {
    const preset = config.preset ? PRESETS[config.preset] : undefined;
    const base_url = config.base_url ?? preset?.base_url;
    if (!base_url) throw new Error(`vendor ${ctx.instanceId}: openai-compatible needs a preset or a base_url`);
    const inst = openAiInstance(
      { base_url, api_key: config.api_key, models: config.models, headers: config.headers },
      ctx
    );
    // Vision is chat with image_url content parts (data: URLs), which these servers take for
    // their vision models; the catalog's `vision` flag decides which models get such calls.
    inst.capabilities['ai.vision'] = inst.capabilities['ai.chat'];
    inst.capabilities['ai.vision.stream'] = inst.capabilities['ai.chat.stream'];
    // A preset's server serves the preset's regions (Qwen, Moonshot, Zhipu: china), not the
    // adapter's `global`; a config's `regions` still overrides.
    if (preset) inst.regions = preset.regions;
    return inst;
  },
});
