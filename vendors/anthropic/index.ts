import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  secret,
  type CapabilityImpl,
  planOf,
  tokenPrice,
  type CandidatePlan,
  type ChatInput,
  type ChatOutput,
  type ChatStreamEvent,
  joinUrl,
  PooledHttp,
  httpHealthProbe,
} from '../../core/kit/vendor.js';
import { messagesRequest, messagesResponse, messagesStream } from './wire.js';
import { anthropicBatchCapabilities } from './batches.js';
import { answerTool } from './tools.js';
import { ANTHROPIC_MODELS } from './models.js';

const VERSION = '2023-06-01';

/** Anthropic Messages API, native: chat, streaming, tools, JSON modes (as a forced tool); 529 overloaded fails over. */
export default defineVendor({
  name: 'anthropic',
  regions: ['western'],
  models: ANTHROPIC_MODELS,
  configSchema: Type.Object(
    {
      api_key: secret(Type.String({ default: '' })),
      base_url: Type.String({ default: 'https://api.anthropic.com' }),
      default_max_tokens: Type.Integer({
        minimum: 1,
        default: 4096,
        description: 'Sent when the caller gives no max_tokens (the API requires one).',
      }),
      models: Type.Optional(Type.Array(Type.String())),
    },
    { additionalProperties: false }
  ),
  byok: {
    provider: 'anthropic',
    credentials: Type.Object({ api_key: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  },
  create(config, ctx) {
    const id = ctx.instanceId;
    const headers = (creds?: Record<string, string>) => ({
      'content-type': 'application/json',
      'anthropic-version': VERSION,
      'x-api-key': creds?.api_key ?? config.api_key,
    });
    // Model calls through a keep-alive pool of undici's own request, as the openai adapter
    // does (far less CPU a call than fetch); the health check keeps the core's fetch.
    const http = new PooledHttp(id, ctx.agent);
    const messagesUrl = joinUrl(config.base_url, '/v1/messages');
    const post = (input: ChatInput, p: CandidatePlan, stream: boolean, signal: AbortSignal) => {
      const body = messagesRequest(
        input,
        p.model,
        input.max_tokens ?? input.estimate.output_tokens ?? config.default_max_tokens,
        stream
      );
      return http.request(messagesUrl, {
        method: 'POST',
        headers: headers(p.credentials),
        body: JSON.stringify(body),
        signal,
      });
    };
    const models = config.models?.length ? config.models : undefined;
    // Vision is chat whose user turns carry image blocks: the same call.
    const chat: CapabilityImpl<ChatInput, ChatOutput, CandidatePlan> = {
      models,
      async invoke(input: ChatInput, opts): Promise<ChatOutput> {
        const p = planOf(opts.plan, id);
        const res = await post(input, p, false, opts.signal);
        return messagesResponse(await http.json(res, opts.signal), p.model, id, answerTool(input)?.name);
      },
      price: (input: ChatInput, out?: ChatOutput, plan?: CandidatePlan) =>
        tokenPrice(plan, out?.usage ?? input.estimate),
    };
    // Streamed vision is the streamed chat, images in the turns.
    // Priced by the usage the stream reports (not by its output), as the streamed chat is.
    const stream: CapabilityImpl<ChatInput, any, CandidatePlan> = {
      models,
      async invoke(input: ChatInput, opts): Promise<AsyncIterable<ChatStreamEvent>> {
        const res = await post(input, planOf(opts.plan, id), true, opts.signal);
        return messagesStream(res.body, id, answerTool(input)?.name);
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
        ...anthropicBatchCapabilities(config, ctx, headers),
      },
      // GET /v1/models is authenticated and costs nothing.
      health: httpHealthProbe(ctx.fetch, joinUrl(config.base_url, '/v1/models'), headers, id),
      close: () => http.close(),
    };
  },
});
