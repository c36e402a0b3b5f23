import {
  type InvokeOptions,
  type VendorContext,
  type VendorInstance,
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
import { chatRequest, chatResponse, chatStream, embedRequest, embedResponse } from './wire.js';

export interface OpenAiClientConfig {
  base_url: string;
  api_key: string;
  organization?: string;
  models?: string[];
  headers?: Record<string, string>;
  maxField?: 'max_tokens' | 'max_completion_tokens';
}

/** JSON headers with the instance's key, or the caller's own (BYOK). */
export function openAiHeaders(cfg: OpenAiClientConfig, creds?: Record<string, string>): Record<string, string> {
  const key = creds?.api_key ?? cfg.api_key;
  return {
    'content-type': 'application/json',
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...(cfg.organization ? { 'openai-organization': cfg.organization } : {}),
    ...cfg.headers,
  };
}

/**
 * An instance speaking OpenAI's wire format at `base_url`: chat, chat stream, embeddings.
 * The key is the instance's, or the caller's own (BYOK) when the plan carries one.
 */
export function openAiInstance(cfg: OpenAiClientConfig, ctx: VendorContext): VendorInstance {
  const id = ctx.instanceId;
  const headers = (creds?: Record<string, string>) => openAiHeaders(cfg, creds);
  const models = cfg.models?.length ? cfg.models : undefined;
  // Model calls go through a keep-alive pool of undici's own request (far less CPU a call
  // than fetch); the rare health check keeps the core's fetch.
  const http = new PooledHttp(id, ctx.agent);
  const chatUrl = joinUrl(cfg.base_url, '/chat/completions');
  const embedUrl = joinUrl(cfg.base_url, '/embeddings');
  return {
    capabilities: {
      'ai.chat': {
        models,
        async invoke(input: ChatInput, opts: InvokeOptions<CandidatePlan>): Promise<ChatOutput> {
          const p = planOf(opts.plan, id);
          const res = await http.request(chatUrl, {
            method: 'POST',
            headers: headers(p.credentials),
            body: JSON.stringify(chatRequest(input, p.model, false, cfg.maxField)),
            signal: opts.signal,
          });
          return chatResponse(await http.json(res, opts.signal), p.model, id);
        },
        price: (input: ChatInput, out?: ChatOutput, plan?: CandidatePlan) =>
          tokenPrice(plan, out?.usage ?? input.estimate),
      },
      'ai.chat.stream': {
        models,
        async invoke(input: ChatInput, opts: InvokeOptions<CandidatePlan>): Promise<AsyncIterable<ChatStreamEvent>> {
          const p = planOf(opts.plan, id);
          const res = await http.request(chatUrl, {
            method: 'POST',
            headers: headers(p.credentials),
            body: JSON.stringify(chatRequest(input, p.model, true, cfg.maxField)),
            signal: opts.signal,
          });
          return chatStream(res.body, id);
        },
        price: (input: ChatInput, usage?: ChatOutput['usage'], plan?: CandidatePlan) =>
          tokenPrice(plan, usage ?? input.estimate),
      },
      'ai.embed': {
        models,
        async invoke(input: EmbedInput, opts: InvokeOptions<CandidatePlan>): Promise<EmbedOutput> {
          const p = planOf(opts.plan, id);
          const res = await http.request(embedUrl, {
            method: 'POST',
            headers: headers(p.credentials),
            body: JSON.stringify(embedRequest(input, p.model)),
            signal: opts.signal,
          });
          return embedResponse(await http.json(res, opts.signal), p.model, id);
        },
        price: (input: EmbedInput, out?: EmbedOutput, plan?: CandidatePlan) =>
          tokenPrice(plan, out?.usage ?? input.estimate),
      },
    },
    // GET /models is authenticated and free: the cheapest check that a key works.
    health: httpHealthProbe(ctx.fetch, joinUrl(cfg.base_url, '/models'), headers, id),
    close: () => http.close(),
  };
}
