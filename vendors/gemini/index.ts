import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  secret,
  VendorFailure,
  type CapabilityImpl,
  type InvokeOptions,
  planOf,
  tokenPrice,
  type CandidatePlan,
  type ChatInput,
  type ChatOutput,
  type ChatStreamEvent,
  type EmbedInput,
  type EmbedOutput,
  joinUrl,
  PooledHttp,
  httpHealthProbe,
} from '../../core/kit/vendor.js';
import { generateRequest, generateResponse, generateStream } from './wire.js';
import { GEMINI_MODELS } from './models.js';

/** Google Gemini API (generativelanguage): generateContent, streamGenerateContent (SSE), batchEmbedContents; JSON modes in generationConfig. */
export default defineVendor({
  name: 'gemini',
  regions: ['western'],
  models: GEMINI_MODELS,
  configSchema: Type.Object(
    {
      api_key: secret(Type.String({ default: '' })),
      base_url: Type.String({ default: 'https://generativelanguage.googleapis.com/v1beta' }),
      models: Type.Optional(Type.Array(Type.String())),
    },
    { additionalProperties: false }
  ),
  byok: {
    provider: 'gemini',
    credentials: Type.Object({ api_key: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  },
  create(config, ctx) {
    const id = ctx.instanceId;
    const headers = (creds?: Record<string, string>) => ({
      'content-type': 'application/json',
      'x-goog-api-key': creds?.api_key ?? config.api_key,
    });
    const url = (model: string, method: string, query = '') =>
      joinUrl(config.base_url, `/models/${encodeURIComponent(model)}:${method}${query}`);
    const models = config.models?.length ? config.models : undefined;
    // Model calls through a keep-alive pool of undici's own request, as the openai adapter
    // does (far less CPU a call than fetch); the health check keeps the core's fetch.
    const http = new PooledHttp(id, ctx.agent);
    const post = (u: string, body: unknown, creds: Record<string, string> | undefined, signal: AbortSignal) =>
      http.request(u, { method: 'POST', headers: headers(creds), body: JSON.stringify(body), signal });
    // Vision is chat whose user turns carry inlineData parts: the same call.
    const chat: CapabilityImpl<ChatInput, ChatOutput, CandidatePlan> = {
      models,
      async invoke(input: ChatInput, opts): Promise<ChatOutput> {
        const p = planOf(opts.plan, id);
        const res = await post(
          url(p.model, 'generateContent'),
          generateRequest(input, p.model),
          p.credentials,
          opts.signal
        );
        return generateResponse(await http.json(res, opts.signal), p.model, id);
      },
      price: (input: ChatInput, out?: ChatOutput, plan?: CandidatePlan) =>
        tokenPrice(plan, out?.usage ?? input.estimate),
    };
    // Streamed vision is the streamed chat, images in the turns.
    // Priced by the usage the stream reports (not by its output), as the streamed chat is.
    const stream: CapabilityImpl<ChatInput, any, CandidatePlan> = {
      models,
      async invoke(input: ChatInput, opts): Promise<AsyncIterable<ChatStreamEvent>> {
        const p = planOf(opts.plan, id);
        const res = await post(
          url(p.model, 'streamGenerateContent', '?alt=sse'),
          generateRequest(input, p.model),
          p.credentials,
          opts.signal
        );
        return generateStream(res.body, id);
      },
      price: (input: ChatInput, usage?: ChatOutput['usage'], plan?: CandidatePlan) =>
        tokenPrice(plan, usage ?? input.estimate),
    };
    return {
      capabilities: {
        'ai.chat': chat,
        'ai.vision': chat,
        'ai.chat.stream': stream,
        'ai.vision.stream': stream,
        'ai.embed': {
          models,
          async invoke(input: EmbedInput, opts: InvokeOptions<CandidatePlan>): Promise<EmbedOutput> {
            const p = planOf(opts.plan, id);
            const requests = input.input.map((text) => ({
              model: `models/${p.model}`,
              content: { parts: [{ text }] },
              ...(input.dimensions ? { outputDimensionality: input.dimensions } : {}),
            }));
            const res = await post(url(p.model, 'batchEmbedContents'), { requests }, p.credentials, opts.signal);
            const j = await http.json<{ embeddings?: Array<{ values: number[] }> }>(res, opts.signal);
            if (!Array.isArray(j.embeddings))
              throw new VendorFailure('unavailable', `${id} answered without embeddings`);
            // Gemini reports no token count for embeddings: charge the input bound.
            return {
              embeddings: j.embeddings.map((e) => e.values),
              model: p.model,
              usage: { input_tokens: input.estimate.input_tokens, output_tokens: 0 },
            };
          },
          price: (input: EmbedInput, out?: EmbedOutput, plan?: CandidatePlan) =>
            tokenPrice(plan, out?.usage ?? input.estimate),
        },
      },
      // Gemini answers a bad key with 400 INVALID_ARGUMENT: it is the key, not the request.
      classify(err) {
        if (err instanceof VendorFailure && err.status === 400 && /API key not valid/i.test(err.message)) return 'auth';
        return undefined;
      },
      // Listing models is authenticated and free.
      health: httpHealthProbe(ctx.fetch, joinUrl(config.base_url, '/models?pageSize=1'), headers, id),
      close: () => http.close(),
    };
  },
});
