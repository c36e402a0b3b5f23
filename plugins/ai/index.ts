import { Type } from '@sinclair/typebox';
import { defineArea } from '../../core/define.js';
import { ModelEntrySchema } from './catalog/types.js';
import { PRESETS } from './catalog/presets.js';
import { aiMigrations } from './migrations.js';
import { AiService } from './service.js';
import { registerAiRoutes } from './routes.js';
import { registerOpenAiRoutes } from './openai/routes.js';
import { MediaService } from './media/media-service.js';
import { registerMediaRoutes } from './media/routes.js';
import { registerOpenAiImageRoutes } from './openai/images-route.js';

const ConfigSchema = Type.Object({
  models: Type.Array(ModelEntrySchema, { default: [], description: 'Extra or overriding catalog entries.' }),
  cache_ttl_seconds: Type.Integer({ minimum: 1, default: 3600, description: 'How long `cache_strategy: service` answers are kept.' }),
  cache_price_usd: Type.Number({ minimum: 0, default: 0, description: 'Charged for an answer served from the service cache.' }),
  default_max_tokens: Type.Integer({ minimum: 1, default: 4096, description: 'Output cap reserved and sent when the caller gives none.' }),
  first_token_timeout_ms: Type.Integer({ minimum: 1, default: 10000, description: 'A stream silent this long before its first token fails over.' }),
}, { additionalProperties: false });

/** AI runtime: routed chat (with streaming), embeddings, vision, image generation, and the OpenAI-compatible surface. */
export default defineArea({
  name: 'ai',
  configSchema: ConfigSchema,
  migrations: aiMigrations,
  capabilities: {
    'ai.chat': { idempotent: true, description: 'Chat completion.' },
    'ai.chat.stream': { idempotent: true, description: 'Chat completion as a stream of events.' },
    'ai.embed': { idempotent: true, description: 'Text embeddings.' },
    'ai.vision': { idempotent: true, description: 'Chat about images (user turns carry inline images).' },
    'ai.image': { idempotent: true, description: 'Image generation from a prompt.' },
  },
  async register(app, ctx) {
    const svc = ctx.svc;
    const ai = new AiService(svc, ctx.config);
    // Instances without a key of their own serve only callers who bring theirs.
    for (const inst of svc.vendors.all()) {
      if (inst.byokOnly) {
        ai.byokOnly.add(inst.id);
        continue;
      }
      if (!inst.def.byok || inst.redactedConfig.api_key !== '') continue;
      const preset = inst.redactedConfig.preset as string | undefined;
      if (inst.adapter === 'openai-compatible' && !(preset && PRESETS[preset]?.needs_key)) continue;
      // Configured without the key its API needs: the router and discovery must see that too.
      inst.byokOnly = true;
      ai.byokOnly.add(inst.id);
    }
    registerAiRoutes(app, ai);
    const media = new MediaService(svc, ai);
    registerMediaRoutes(app, media);
    await app.register(async (scope) => {
      registerOpenAiRoutes(scope, ai, media);
      registerOpenAiImageRoutes(scope, media);
    });
    const sweep = setInterval(() => void ai.cache.sweep().catch((e) => ctx.log.warn({ err: e }, 'cache sweep failed')), 60_000);
    sweep.unref();
    app.addHook('onClose', async () => clearInterval(sweep));
  },
});
