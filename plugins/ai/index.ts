import { Type } from '@sinclair/typebox';
import { defineArea, AI_CAPABILITIES, ModelEntrySchema, usdToMicros } from '../../core/kit/area.js';
import { aiMigrations } from './migrations.js';
import { AiService } from './service.js';
import { catalogPlanner, PLANNED_CAPABILITIES } from './planner.js';
import { registerAiRoutes } from './routes.js';
import { registerOpenAiRoutes } from './openai/routes.js';
import { BatchStore } from './batch/store.js';
import { BATCH_JOB, type BatchDeps } from './batch/submit.js';
import { batchJobHandler, failBatch } from './batch/runner.js';
import { VENDOR_CANCEL_JOB, vendorCancelJobHandler } from './batch/cancel.js';
import { registerBatchRoutes } from './batch/routes.js';
import { REALTIME_CAPABILITY, RealtimeConfig, registerRealtimeToken } from './realtime-token.js';
import { SpeechService } from './speech/service.js';
import { registerSpeechRoutes } from './speech/routes.js';
import { registerOpenAiAudioRoutes } from './openai/audio-routes.js';
import { MediaService } from './media/media-service.js';
import { registerMediaRoutes } from './media/routes.js';
import { registerOpenAiImageRoutes } from './openai/images-route.js';
import { registerOpenAiImageUploadRoutes } from './openai/image-upload-routes.js';
import { pricedCapabilities } from './list-price.js';

const ConfigSchema = Type.Object(
  {
    models: Type.Array(ModelEntrySchema, { default: [], description: 'Extra or overriding catalog entries.' }),
    cache_ttl_seconds: Type.Integer({
      minimum: 1,
      default: 3600,
      description: 'How long `cache_strategy: service` answers are kept.',
    }),
    cache_price_usd: Type.Number({
      minimum: 0,
      default: 0,
      description: 'Charged for an answer served from the service cache.',
    }),
    default_max_tokens: Type.Integer({
      minimum: 1,
      default: 4096,
      description: 'Output cap reserved and sent when the caller gives none.',
    }),
    first_token_timeout_ms: Type.Integer({
      minimum: 1,
      default: 10000,
      description: 'A stream silent this long before its first token fails over.',
    }),
    batch_poll_ms: Type.Integer({
      minimum: 10,
      default: 30000,
      description: 'How often a vendor batch (`batch_mode: true`) is asked whether it is done.',
    }),
    realtime: RealtimeConfig,
  },
  { additionalProperties: false }
);

/** AI runtime: routed chat (with streaming), embeddings, vision, image generation, and the OpenAI-compatible surface. */
export default defineArea({
  name: 'ai',
  configSchema: ConfigSchema,
  migrations: aiMigrations,
  capabilities: AI_CAPABILITIES,
  async register(app, ctx) {
    const svc = ctx.svc;
    const ai = new AiService(svc, ctx.config);
    // The catalog (with the operator's models) is this app's: discovery's prices come from it.
    for (const [cap, spec] of pricedCapabilities(AI_CAPABILITIES, ai.catalog)) svc.capabilities.set(cap, spec);
    // Instances without a key of their own serve only callers who bring theirs.
    for (const inst of svc.vendors.all()) {
      if (inst.byokOnly) {
        ai.byokOnly.add(inst.id);
        continue;
      }
      if (!inst.def.byok || inst.redactedConfig.api_key !== '') continue;
      const preset = inst.redactedConfig.preset as string | undefined;
      // An adapter of known servers (openai-compatible): only a preset's server says it needs a key.
      if (inst.def.presets && !(preset && inst.def.presets[preset]?.needs_key)) continue;
      // Configured without the key its API needs: the router and discovery must see that too.
      inst.byokOnly = true;
      ai.byokOnly.add(inst.id);
    }
    // The router's planner hooks: which model each candidate is asked for, and in what order.
    const planner = catalogPlanner(ai.catalog);
    for (const cap of PLANNED_CAPABILITIES) svc.router.planner(cap, planner, { docs: 'docs/ai.md' });
    // A live session token is the area's flat price (the caller's own key: the platform fee only).
    const realtimeMicros = usdToMicros(ctx.config.realtime.price_usd);
    svc.router.price(REALTIME_CAPABILITY, () => realtimeMicros);
    const batches: BatchDeps = {
      svc,
      ai,
      store: new BatchStore(svc.db),
      pollMs: ctx.config.batch_poll_ms,
      cancelRetryMs: ctx.config.batch_poll_ms,
      log: ctx.log,
    };
    svc.jobs.register(BATCH_JOB, batchJobHandler(batches), {
      // Its last attempt died with its node: the batch must not wait forever holding money.
      onExhausted: async (_id, p: { batch_id: string }, error) => failBatch(batches, p.batch_id, error),
    });
    svc.jobs.register(VENDOR_CANCEL_JOB, vendorCancelJobHandler(batches), {
      // Its last try died with its node: nothing is owed to anyone, the batch is final; say so.
      onExhausted: async (_id, p: { batch_id: string; vendor: string }, error) =>
        ctx.log.warn(
          { batch_id: p.batch_id, vendor: p.vendor, error },
          'gave up asking the vendor to cancel a chat batch'
        ),
    });
    registerAiRoutes(app, ai, batches);
    const media = new MediaService(svc, ai);
    registerMediaRoutes(app, media);
    registerBatchRoutes(app, batches);
    registerRealtimeToken(app, svc, ctx.config.realtime);
    const speech = new SpeechService(svc, ai);
    registerSpeechRoutes(app, speech);
    await app.register(async (scope) => {
      registerOpenAiRoutes(scope, ai, media);
      registerOpenAiImageRoutes(scope, media);
      await scope.register(async (audio) => registerOpenAiAudioRoutes(audio, speech));
      await scope.register(async (uploads) => registerOpenAiImageUploadRoutes(uploads, media));
    });
    const sweep = setInterval(
      () => void ai.cache.sweep().catch((e) => ctx.log.warn({ err: e }, 'cache sweep failed')),
      60_000
    );
    sweep.unref();
    app.addHook('onClose', async () => clearInterval(sweep));
  },
});
