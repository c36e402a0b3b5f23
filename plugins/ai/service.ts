import type { FastifyRequest } from 'fastify';
import {
  type Svc,
  isApiError,
  microsToUsd,
  usdToMicros,
  type Attempt,
  type CallOptions,
  type CallResult,
  type StreamSession,
  type Routed,
  type ChatInput,
  type ChatMessage,
  type ChatOutput,
  type ChatStreamEvent,
  type EmbedInput,
  type EmbedOutput,
  type ToolChoice,
  type Usage,
} from '../../core/kit/area.js';
import { Catalog, type ModelEntry } from './catalog/catalog.js';
import { declaredModels } from './catalog/declared-models.js';
import { ChatCache } from './cache.js';
import type { AiPlanInput, Candidate, PlannedCapability } from './planner.js';
import type { ChatBodyT, ChatResultT, EmbedBodyT } from './schemas.js';
import { responseFormat, toolChoice } from './chat-options.js';
import { chatInputBound, tokenBound } from './input-bound.js';

export interface AiConfig {
  models: ModelEntry[];
  cache_ttl_seconds: number;
  cache_price_usd: number;
  default_max_tokens: number;
  first_token_timeout_ms: number;
}

export function toMessages(m: ChatBodyT['messages']): ChatMessage[] {
  return typeof m === 'string' ? [{ role: 'user', content: m }] : (m as ChatMessage[]);
}

/**
 * A chat as the service takes it: the native body, plus what only the OpenAI-compatible
 * surface carries (the spec's /v1/ai/chat has no `tool_choice` or `stop`).
 */
export type ChatRequest = ChatBodyT & {
  tool_choice?: ToolChoice;
  stop?: string[];
  openai_params?: Record<string, unknown>;
};

export interface Prepared<I> {
  input: I;
  candidates: Array<Routed<Candidate>>;
  modelOf(vendor: string): string | undefined;
}

/** A planned call: its input, and the candidates whose plans the router hands out one by one. */
export function prepared<I>(input: I, candidates: Array<Routed<Candidate>>): Prepared<I> {
  return { input, candidates, modelOf: (v) => candidates.find((c) => c.id === v)?.plan.model };
}

/** What the AI area asks its planner for one call: the capability, and the request's pins and wishes. */
export interface AiPlanCall extends AiPlanInput {
  capability: PlannedCapability;
  model?: string;
  vendor?: string;
}

/** Chat and embeddings for both the native /v1/ai surface and the OpenAI-compatible one. */
export class AiService {
  readonly catalog: Catalog;
  readonly cache: ChatCache;
  readonly byokOnly = new Set<string>();

  constructor(
    private readonly svc: Svc,
    readonly cfg: AiConfig
  ) {
    // Assembled from what the configured adapters declare: a third-party chat vendor brings its rows.
    this.catalog = new Catalog(declaredModels(svc.vendors.all()), cfg.models);
    this.cache = new ChatCache(svc.db, cfg.cache_ttl_seconds * 1000);
  }

  /** The router's candidates for a call, planned by this area's catalog planner (BYOK first). */
  async plan(req: FastifyRequest, p: AiPlanCall): Promise<Array<Routed<Candidate>>> {
    const { accountId, region } = req.principal!;
    const { capability, model, vendor, task, prefer, needs } = p;
    return this.svc.router.plan<AiPlanInput, Candidate>(capability, {
      accountId,
      region,
      model,
      vendor,
      request: { task, prefer, needs },
    });
  }

  async prepareChat(
    req: FastifyRequest,
    body: ChatRequest,
    stream: boolean,
    capability: PlannedCapability = stream ? 'ai.chat.stream' : 'ai.chat'
  ): Promise<Prepared<ChatInput>> {
    const response_format = responseFormat(body.response_format);
    const tool_choice = toolChoice(body.tool_choice, body.tools);
    const needs: AiPlanInput['needs'] = [];
    if (body.tools?.length) needs.push('tools');
    if (body.response_format && body.response_format.type !== 'text') needs.push('json');
    const candidates = await this.plan(req, {
      capability,
      model: body.model,
      vendor: body.vendor,
      task: body.task ?? 'general',
      prefer: body.prefer ?? 'balanced',
      needs,
    });
    const messages = toMessages(body.messages);
    const inputTokens = chatInputBound(messages, { tools: body.tools, response_format, tool_choice, stop: body.stop });
    // The output cap is reserved in full: the caller's max_tokens, else the primary model's cap.
    const maxTokens = body.max_tokens ?? Math.min(this.cfg.default_max_tokens, candidates[0].entry.max_output);
    const input: ChatInput = {
      messages,
      max_tokens: maxTokens,
      temperature: body.temperature,
      tools: body.tools,
      response_format,
      tool_choice,
      ...(body.stop?.length ? { stop: body.stop } : {}),
      ...(body.openai_params ? { openai_params: body.openai_params } : {}),
      cache_strategy: body.cache_strategy ?? 'vendor',
      estimate: { input_tokens: inputTokens, output_tokens: maxTokens },
    };
    return prepared(input, candidates);
  }

  callOptions(
    req: FastifyRequest,
    candidates: Array<Routed<Candidate>>,
    body: { max_cost_multiplier?: number; timeout_seconds?: number }
  ): CallOptions {
    return {
      accountId: req.principal!.accountId,
      meter: req.meter,
      route: candidates,
      ref: req.id,
      maxCostMultiplier: body.max_cost_multiplier,
      timeoutMs: body.timeout_seconds ? Math.round(body.timeout_seconds * 1000) : undefined,
    };
  }

  metadata(
    p: Prepared<unknown>,
    vendor: string,
    attempts: Attempt[],
    latencyMs: number,
    costMicros: number,
    cached = false
  ) {
    return {
      vendor,
      model: p.modelOf(vendor) ?? '',
      latency_ms: Math.round(latencyMs),
      cost_usd: microsToUsd(costMicros),
      cached,
      byok: !!p.candidates.find((c) => c.id === vendor)?.byok,
      attempts: attempts.map((a) => ({ ...a, model: a.model ?? p.modelOf(a.vendor) })),
    };
  }

  /** Router errors carry attempts: name the model each vendor was asked for. */
  withModels(e: unknown, p: Prepared<unknown>): unknown {
    if (isApiError(e) && Array.isArray(e.details.attempts)) {
      e.details.attempts = (e.details.attempts as Attempt[]).map((a) => ({
        ...a,
        model: a.model ?? p.modelOf(a.vendor),
      }));
    }
    return e;
  }

  cacheKey(req: FastifyRequest, body: ChatRequest): string {
    const {
      messages,
      model,
      vendor,
      task,
      prefer,
      temperature,
      max_tokens,
      tools,
      response_format,
      tool_choice,
      stop,
      openai_params,
    } = body;
    // The defaults spelled out, as the native schema fills them in: the OpenAI surface's body has none.
    return this.cache.key(req.principal!.accountId, {
      messages: toMessages(messages),
      model,
      vendor,
      task: task ?? 'general',
      prefer: prefer ?? 'balanced',
      temperature,
      max_tokens,
      tools,
      response_format,
      tool_choice,
      stop,
      openai_params,
    });
  }

  /** A cached answer, charged at the cache price. */
  async cached(req: FastifyRequest, hash: string): Promise<ChatResultT | undefined> {
    const hit = await this.cache.get<ChatResultT>(req.principal!.accountId, hash);
    if (!hit) return undefined;
    const price = usdToMicros(this.cfg.cache_price_usd);
    const meta = { capability: 'ai.chat', vendor: 'cache' };
    const later = req.meter.charges;
    // Under an idempotency key the charge is written with the stored answer (Meter.charges).
    if (price > 0 && later) {
      const hold = await this.svc.wallet.reserve(req.principal!.accountId, price, meta.capability);
      await this.svc.wallet.settle(hold, price, { vendor: meta.vendor, ref: req.id }, later);
    } else if (price > 0)
      await this.svc.wallet.debit(req.principal!.accountId, price, 'usage', req.id, undefined, meta);
    req.meter.metered = true;
    req.meter.costMicros += price;
    return {
      ...hit,
      metadata: { ...hit.metadata, cached: true, cost_usd: microsToUsd(price), latency_ms: 0, attempts: [] },
    };
  }

  async chat(req: FastifyRequest, body: ChatRequest): Promise<ChatResultT> {
    const useCache = body.cache_strategy === 'service';
    const hash = useCache ? this.cacheKey(req, body) : '';
    if (useCache) {
      const hit = await this.cached(req, hash);
      if (hit) return hit;
    }
    const p = await this.prepareChat(req, body, false);
    const started = performance.now();
    let r;
    try {
      r = await this.svc.router.call<ChatInput, ChatOutput>(
        'ai.chat',
        p.input,
        this.callOptions(req, p.candidates, body)
      );
    } catch (e) {
      throw this.withModels(e, p);
    }
    const result = this.chatResult(p, r, started);
    if (useCache) await this.cache.put(req.principal!.accountId, hash, result);
    return result;
  }

  /** A router result as the wire's ChatResult (chat and vision). */
  chatResult(p: Prepared<unknown>, r: CallResult<ChatOutput>, started: number): ChatResultT {
    const o = r.output;
    return {
      content: o.content,
      finish_reason: o.finish_reason,
      ...(o.tool_calls?.length ? { tool_calls: o.tool_calls } : {}),
      usage: {
        input_tokens: o.usage.input_tokens,
        output_tokens: o.usage.output_tokens,
        total_tokens: o.usage.input_tokens + o.usage.output_tokens,
      },
      metadata: this.metadata(p, r.vendor, r.attempts, performance.now() - started, r.costMicros),
    };
  }

  async openStream(
    req: FastifyRequest,
    body: ChatRequest
  ): Promise<{ p: Prepared<ChatInput>; session: StreamSession<ChatStreamEvent, Usage> }> {
    const p = await this.prepareChat(req, body, true);
    return { p, session: await this.startStream(req, p, body, 'ai.chat.stream') };
  }

  /** Start a prepared chat's stream on `capability` (chat, or vision with its images in the turns). */
  async startStream(
    req: FastifyRequest,
    p: Prepared<ChatInput>,
    body: ChatBodyT,
    capability: 'ai.chat.stream' | 'ai.vision.stream'
  ): Promise<StreamSession<ChatStreamEvent, Usage>> {
    try {
      const opts = {
        ...this.callOptions(req, p.candidates, body),
        firstEventTimeoutMs: this.cfg.first_token_timeout_ms,
      };
      return await this.svc.router.stream<ChatInput, ChatStreamEvent, Usage>(capability, p.input, opts);
    } catch (e) {
      throw this.withModels(e, p);
    }
  }

  async embed(req: FastifyRequest, body: EmbedBodyT) {
    const candidates = await this.plan(req, {
      capability: 'ai.embed',
      model: body.model,
      vendor: body.vendor,
      task: 'general',
      prefer: 'cheapest',
      needs: [],
    });
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    const input: EmbedInput = {
      input: inputs,
      dimensions: body.dimensions,
      estimate: { input_tokens: inputs.reduce((n, s) => n + tokenBound(s), 0), output_tokens: 0 },
    };
    const p = prepared(input, candidates);
    const started = performance.now();
    let r;
    try {
      r = await this.svc.router.call<EmbedInput, EmbedOutput>('ai.embed', input, this.callOptions(req, candidates, {}));
    } catch (e) {
      throw this.withModels(e, p);
    }
    return {
      embeddings: r.output.embeddings,
      model: r.output.model,
      usage: { input_tokens: r.output.usage.input_tokens, total_tokens: r.output.usage.input_tokens },
      metadata: this.metadata(p, r.vendor, r.attempts, performance.now() - started, r.costMicros),
    };
  }
}
