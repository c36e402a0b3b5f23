import { Type } from '@sinclair/typebox';
import { defineVendor, secret } from '../../core/kit/vendor.js';
import { openAiInstance } from './client.js';
import { openAiBatchCapabilities } from './batches.js';
import { openAiRealtimeCapability } from './realtime.js';
import { openAiAudio } from './audio.js';
import { openAiImages } from './images.js';
import { openAiImageUploads } from './image-edits.js';
import { OPENAI_MODELS } from './models.js';

/** OpenAI (api.openai.com or any `base_url`): chat, streaming, tools, JSON modes, embeddings, vision, image generation, edits and variations. */
export default defineVendor({
  name: 'openai',
  regions: ['western'],
  models: OPENAI_MODELS,
  configSchema: Type.Object(
    {
      api_key: secret(
        Type.String({ default: '', description: 'OpenAI API key; empty for an instance used only with BYOK keys.' })
      ),
      base_url: Type.String({ default: 'https://api.openai.com/v1' }),
      organization: Type.Optional(Type.String()),
      models: Type.Optional(Type.Array(Type.String(), { description: 'Restrict the instance to these models.' })),
    },
    { additionalProperties: false }
  ),
  byok: {
    provider: 'openai',
    credentials: Type.Object({ api_key: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  },
  create(config, ctx) {
    const cfg = { ...config, maxField: 'max_completion_tokens' as const };
    const inst = openAiInstance(cfg, ctx);
    // Batch API, realtime client secrets, speech and images are OpenAI's own, not part of what
    // the openai-compatible servers speak. Vision is chat with image_url content parts.
    Object.assign(
      inst.capabilities,
      openAiBatchCapabilities(config, ctx),
      { 'ai.realtime.token': openAiRealtimeCapability(config, ctx) },
      openAiAudio(config, ctx)
    );
    inst.capabilities['ai.vision'] = inst.capabilities['ai.chat'];
    inst.capabilities['ai.vision.stream'] = inst.capabilities['ai.chat.stream'];
    inst.capabilities['ai.image'] = openAiImages(cfg, ctx);
    Object.assign(inst.capabilities, openAiImageUploads(cfg, ctx));
    return inst;
  },
});
