import type { FastifyRequest } from 'fastify';
import type { Svc } from '../../core/context.js';
import { apiError, isApiError } from '../../core/errors.js';
import { microsToUsd, usdToMicros } from '../../core/wallet/money.js';
import type { Attempt, CallOptions, CallResult } from '../../core/router/router.js';
import { streamCall, type StreamSession } from '../../core/router/stream-call.js';
import { credentialValues } from '../../core/router/scrub.js';
import { ByokStore } from '../byok/store.js';
import { NoByokCache } from './no-byok-cache.js';
import { Catalog, type ModelEntry } from './catalog/catalog.js';
import { ChatCache } from './cache.js';
import { planCandidates, planFlatCandidates, type Candidate, type FlatCandidate, type PlanRequest } from './planner.js';
import type { ChatInput, ChatMessage, ChatOutput, ChatStreamEvent, EmbedInput, EmbedOutput, ToolChoice, Usage } from '../../core/capabilities/ai/chat.js';
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

/** CallOptions.fees from (instance id, fee) pairs: only the non-zero ones (BYOK's platform fee). */
export function feesOf(pairs: Array<[string, number]>): Record<string, number> {
  return Object.fromEntries(pairs.filter(([, fee]) => fee > 0));
}

export function toMessages(m: ChatBodyT['messages']): ChatMessage[] {
  return typeof m === 'string' ? [{ role: 'user', content: m }] : (m as ChatMessage[]);
}

/**
 * A chat as the service takes it: the native body, plus what only the OpenAI-compatible
 * surface carries (the spec's /v1/ai/chat has no `tool_choice` or `stop`).
 */
export type ChatRequest = ChatBodyT & { tool_choice?: ToolChoice; stop?: string[]; openai_params?: Record<string, unknown> };

export interface Prepared<I> {
  input: I;
  candidates: Candidate[];
  modelOf(vendor: string): string | undefined;
}

/** A planned call: its input, and the candidates whose plans the router hands out one by one. */
export function prepared<I>(input: I, candidates: Candidate[]): Prepared<I> {
  return { input, candidates, modelOf: (v) => candidates.find((c) => c.instanceId === v)?.plan.model };
}

/** Chat and embeddings for both the native /v1/ai surface and the OpenAI-compatible one. */
export class AiService {
  readonly catalog: Catalog;
  readonly cache: ChatCache;
  readonly byokOnly = new Set<string>();
  /** Accounts known to have no active BYOK key (the area's index drops them on BYOK_CHANGED). */
  readonly noByok = new NoByokCache();
  private store?: ByokStore | null;

  constructor(private readonly svc: Svc, readonly cfg: AiConfig) {
    this.catalog = new Catalog(cfg.models);
    this.cache = new ChatCache(svc.db, cfg.cache_ttl_seconds * 1000);
  }

  /** The BYOK store, when the byok area is on. */
  byok(): ByokStore | null {
    if (this.store === undefined) {
      this.store = this.svc.areas.some((a) => a.def.name === 'byok') ? new ByokStore(this.svc.db, this.svc.masterKey) : null;
    }
    return this.store;
  }

  /** The caller's active BYOK credentials; most accounts have none, and that answer is cached. */
  private async activeByok(accountId: string): Promise<Map<string, Record<string, string>>> {
    const store = this.byok();
    if (!store || this.noByok.has(accountId)) return new Map();
    const epoch = this.noByok.epoch;
    const keys = await store.active(accountId);
    if (!keys.size) this.noByok.add(accountId, epoch);
    return keys;
  }

  private feeMicros?: number;

  private byokFeeMicros(): number {
    if (this.feeMicros === undefined) {
      const cfg = this.svc.areas.find((a) => a.def.name === 'byok')?.config as { platform_fee_usd?: number } | undefined;
      this.feeMicros = usdToMicros(cfg?.platform_fee_usd ?? 0);
    }
    return this.feeMicros;
  }

  async plan(req: FastifyRequest, p: Omit<PlanRequest, 'region' | 'byok' | 'byokFeeMicros'>): Promise<Candidate[]> {
    const principal = req.principal!;
    const byok = await this.activeByok(principal.accountId);
    return planCandidates(this.svc.vendors, this.catalog, this.byokOnly, { ...p, region: principal.region, byok, byokFeeMicros: this.byokFeeMicros() });
  }

  /** Candidates for a capability with one flat price a call (live session tokens), BYOK first. */
  async planFlat(req: FastifyRequest, capability: string, priceMicros: number): Promise<FlatCandidate[]> {
    const principal = req.principal!;
    const byok = await this.activeByok(principal.accountId);
    return planFlatCandidates(this.svc.vendors, this.byokOnly, { capability, region: principal.region, byok, byokFeeMicros: this.byokFeeMicros(), priceMicros });
  }

  async prepareChat(req: FastifyRequest, body: ChatRequest, stream: boolean, capability: PlanRequest['capability'] = stream ? 'ai.chat.stream' : 'ai.chat'): Promise<Prepared<ChatInput>> {
    const response_format = responseFormat(body.response_format);
    const tool_choice = toolChoice(body.tool_choice, body.tools);
    const needs: PlanRequest['needs'] = [];
    if (body.tools?.length) needs.push('tools');
    if (body.response_format && body.response_format.type !== 'text') needs.push('json');
    const candidates = await this.plan(req, {
      capability, model: body.model, vendor: body.vendor,
      task: body.task ?? 'general', prefer: body.prefer ?? 'balanced', needs,
    });
    const messages = toMessages(body.messages);
    const inputTokens = chatInputBound(messages, { tools: body.tools, response_format, tool_choice, stop: body.stop });
    // The output cap is reserved in full: the caller's max_tokens, else the primary model's cap.
    const maxTokens = body.max_tokens ?? Math.min(this.cfg.default_max_tokens, candidates[0].entry.max_output);
    const input: ChatInput = {
      messages, max_tokens: maxTokens, temperature: body.temperature, tools: body.tools, response_format, tool_choice,
      ...(body.stop?.length ? { stop: body.stop } : {}),
      ...(body.openai_params ? { openai_params: body.openai_params } : {}),
      cache_strategy: body.cache_strategy ?? 'vendor',
      estimate: { input_tokens: inputTokens, output_tokens: maxTokens },
    };
    return prepared(input, candidates);
  }

  callOptions(req: FastifyRequest, candidates: Candidate[], body: { max_cost_multiplier?: number; timeout_seconds?: number }): CallOptions {
    const accountId = req.principal!.accountId;
    const byok = candidates.filter((c) => c.byok);
    return {
      accountId, meter: req.meter, order: candidates.map((c) => c.instanceId),
      plans: Object.fromEntries(candidates.map((c) => [c.instanceId, c.plan])),
      maxCostMultiplier: body.max_cost_multiplier ?? 1.5, timeoutMs: body.timeout_seconds ? Math.round(body.timeout_seconds * 1000) : undefined,
      ref: req.id, fees: feesOf(candidates.map((c) => [c.instanceId, c.plan.fee])),
      secrets: credentialValues(...candidates.map((c) => c.plan.credentials)),
      ...(byok.length ? {
        // The caller's own key failing (refused, over its quota) says nothing about the
        // operator's key on the same instance: its cooldown is this account's alone.
        cooldownScope: Object.fromEntries(byok.map((c) => [c.instanceId, `byok:${accountId}`])),
        onFailure: async (instanceId, kind) => {
          const c = byok.find((b) => b.instanceId === instanceId);
          if (kind !== 'auth' || !c?.plan.credentials) return;
          await this.byok()?.invalidate(accountId, c.plan.credentials, { code: 'vendor_rejected', message: `${instanceId} refused the key on a call (${kind}); test it again once fixed.` })
            .catch((e) => this.svc.log.warn({ err: e, instanceId }, 'marking a refused BYOK key invalid failed'));
        },
      } : {}),
    };
  }

  metadata(p: Prepared<unknown>, vendor: string, attempts: Attempt[], latencyMs: number, costMicros: number, cached = false) {
    return {
      vendor, model: p.modelOf(vendor) ?? '', latency_ms: Math.round(latencyMs), cost_usd: microsToUsd(costMicros), cached,
      byok: !!p.candidates.find((c) => c.instanceId === vendor)?.byok,
      attempts: attempts.map((a) => ({ ...a, model: a.model ?? p.modelOf(a.vendor) })),
    };
  }

  /** Router errors carry attempts: name the model each vendor was asked for. */
  withModels(e: unknown, p: Prepared<unknown>): unknown {
    if (isApiError(e) && Array.isArray(e.details.attempts)) {
      e.details.attempts = (e.details.attempts as Attempt[]).map((a) => ({ ...a, model: a.model ?? p.modelOf(a.vendor) }));
    }
    return e;
  }

  cacheKey(req: FastifyRequest, body: ChatRequest): string {
    const { messages, model, vendor, task, prefer, temperature, max_tokens, tools, response_format, tool_choice, stop, openai_params } = body;
    // The defaults spelled out, as the native schema fills them in: the OpenAI surface's body has none.
    return this.cache.key(req.principal!.accountId, {
      messages: toMessages(messages), model, vendor, task: task ?? 'general', prefer: prefer ?? 'balanced', temperature, max_tokens, tools, response_format, tool_choice, stop, openai_params,
    });
  }

  /** A cached answer, charged at the cache price. */
  async cached(req: FastifyRequest, hash: string): Promise<ChatResultT | undefined> {
    const hit = await this.cache.get<ChatResultT>(req.principal!.accountId, hash);
    if (!hit) return undefined;
    const price = usdToMicros(this.cfg.cache_price_usd);
    if (price > 0) await this.svc.wallet.debit(req.principal!.accountId, price, 'usage', req.id, undefined, { capability: 'ai.chat', vendor: 'cache' });
    req.meter.metered = true;
    req.meter.costMicros += price;
    return { ...hit, metadata: { ...hit.metadata, cached: true, cost_usd: microsToUsd(price), latency_ms: 0, attempts: [] } };
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
      r = await this.svc.router.call<ChatInput, ChatOutput>('ai.chat', p.input, this.callOptions(req, p.candidates, body));
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
      content: o.content, finish_reason: o.finish_reason, ...(o.tool_calls?.length ? { tool_calls: o.tool_calls } : {}),
      usage: { input_tokens: o.usage.input_tokens, output_tokens: o.usage.output_tokens, total_tokens: o.usage.input_tokens + o.usage.output_tokens },
      metadata: this.metadata(p, r.vendor, r.attempts, performance.now() - started, r.costMicros),
    };
  }

  async openStream(req: FastifyRequest, body: ChatRequest): Promise<{ p: Prepared<ChatInput>; session: StreamSession<ChatStreamEvent, Usage> }> {
    const p = await this.prepareChat(req, body, true);
    return { p, session: await this.startStream(req, p, body, 'ai.chat.stream') };
  }

  /** Start a prepared chat's stream on `capability` (chat, or vision with its images in the turns). */
  async startStream(req: FastifyRequest, p: Prepared<ChatInput>, body: ChatBodyT, capability: 'ai.chat.stream' | 'ai.vision.stream'): Promise<StreamSession<ChatStreamEvent, Usage>> {
    try {
      return await streamCall<ChatInput, ChatStreamEvent, Usage>({
        registry: this.svc.vendors, wallet: this.svc.wallet, cooldowns: this.svc.router.cooldowns, capabilities: this.svc.capabilities,
        markup: this.svc.config.wallet.markup, log: this.svc.log,
      }, capability, p.input, { ...this.callOptions(req, p.candidates, body), firstEventTimeoutMs: this.cfg.first_token_timeout_ms });
    } catch (e) {
      throw this.withModels(e, p);
    }
  }

  async embed(req: FastifyRequest, body: EmbedBodyT) {
    const candidates = await this.plan(req, { capability: 'ai.embed', model: body.model, vendor: body.vendor, task: 'general', prefer: 'cheapest', needs: [] });
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    const input: EmbedInput = {
      input: inputs, dimensions: body.dimensions,
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
      embeddings: r.output.embeddings, model: r.output.model,
      usage: { input_tokens: r.output.usage.input_tokens, total_tokens: r.output.usage.input_tokens },
      metadata: this.metadata(p, r.vendor, r.attempts, performance.now() - started, r.costMicros),
    };
  }
}
