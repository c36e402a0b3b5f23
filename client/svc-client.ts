import { pageQuery, type CallInit, type Requester } from './call.js';
import { EmailApi } from './email.js';
import { SvcError, errorFromResponse } from './errors.js';
import { EventsApi } from './events.js';
import { paginate } from './paginate.js';
import { SmsApi } from './sms.js';
import { RealtimeApi } from './realtime.js';
import { PublicUrlApi } from './public-url.js';
import { BillingApi } from './billing.js';
import { CaptchaApi } from './captcha.js';
import { ObservabilityApi } from './observability.js';
import { VideoApi } from './video.js';
import { AnalyticsApi } from './analytics.js';
import type {
  AccountSummaryResponse,
  ActivateRequest,
  ActivateResponse,
  BalanceResponse,
  CallCost,
  CreateKeyRequest,
  CreatedKeyResponse,
  KeyPage,
  ListQuery,
  OkResponse,
  ProjectKeyItem,
  RequestOptions,
  RotatedKeyResponse,
  TopupRecord,
  TopupRequest,
  UpgradeTierRequest,
  UsageQuery,
  UsageReport,
} from './types.js';

export interface SvcClientOptions {
  /** The gateway's address, e.g. `http://127.0.0.1:8787` (a trailing `/v1` is tolerated). */
  baseUrl: string;
  /** The project key, sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /** A fetch implementation; the global one (Node 20+, browsers) by default. */
  fetch?: typeof globalThis.fetch;
  /** Per-call time limit in ms (default 60 s); 0 turns it off. */
  timeoutMs?: number;
}

/** AbortSignal.any, or the same by hand where a browser lacks it. */
function anySignal(signals: AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals);
  const ac = new AbortController();
  for (const s of signals) {
    if (s.aborted) {
      ac.abort(s.reason);
      break;
    }
    s.addEventListener('abort', () => ac.abort(s.reason), { once: true });
  }
  return ac.signal;
}

function num(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * A typed client of the gateway's HTTP API. It throws `SvcError` for every failure and keeps
 * what the last metered call cost in `lastCost`, so a caller sees spending without a second call.
 */
export class SvcClient {
  readonly baseUrl: string;
  apiKey?: string;
  /** Cost headers of the most recent response that carried them; undefined after one that did not. */
  lastCost?: CallCost;
  /** `x-request-id` of the most recent response. */
  lastRequestId?: string;
  /** Send and read email; its domains, suppression list and templates. */
  readonly email: EmailApi;
  /** Send and read text messages; one-time passcodes. */
  readonly sms: SmsApi;
  /** The event types and the endpoints events are pushed to. */
  readonly events: EventsApi;
  /** Client tokens, channels, publishing and presence; the account's Pusher app. */
  readonly realtime: RealtimeApi;
  /** Public URLs for tunnels (`svc-gateway tunnel PORT`) and their custom domains. */
  readonly publicUrl: PublicUrlApi;
  /** Charges and refunds of your end customers. */
  readonly billing: BillingApi;
  /** Verify captcha tokens; widgets and site keys. */
  readonly captcha: CaptchaApi;
  /** Errors and issues, events, metrics, the Sentry DSN, feature flags. */
  readonly observability: ObservabilityApi;
  /** Text-to-video jobs: generate, poll, list, cancel. */
  readonly video: VideoApi;
  /** Product events, people, funnels and cohorts. */
  readonly analytics: AnalyticsApi;
  private readonly fetchImpl: typeof globalThis.fetch;
  private readonly timeoutMs: number;

  constructor(opts: SvcClientOptions) {
    if (!opts?.baseUrl) throw new TypeError('SvcClient needs a baseUrl, e.g. http://127.0.0.1:8787');
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.apiKey = opts.apiKey;
    // Bound so a browser's window.fetch is not called with the client as `this`.
    const f = opts.fetch ?? globalThis.fetch;
    if (typeof f !== 'function') throw new TypeError('No fetch available: pass one in the options');
    this.fetchImpl = f.bind(globalThis);
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    const call: Requester = (method, path, init) => this.request(method, path, init);
    this.email = new EmailApi(call);
    this.sms = new SmsApi(call);
    this.events = new EventsApi(call);
    this.realtime = new RealtimeApi(call);
    this.publicUrl = new PublicUrlApi(call);
    this.billing = new BillingApi(call);
    this.captcha = new CaptchaApi(call);
    this.observability = new ObservabilityApi(call);
    this.video = new VideoApi(call);
    this.analytics = new AnalyticsApi(call);
  }

  /** One call: JSON in, JSON out, the conventions' error body turned into a SvcError. */
  async request<T>(method: string, path: string, init: CallInit = {}): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.auth !== false && this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (init.idempotencyKey) headers['idempotency-key'] = init.idempotencyKey;
    const signals = [init.signal, this.timeoutMs > 0 ? AbortSignal.timeout(this.timeoutMs) : undefined].filter(
      (s): s is AbortSignal => !!s
    );
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: signals.length > 1 ? anySignal(signals) : signals[0],
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      const timedOut = err?.name === 'TimeoutError';
      const why = err?.cause?.code ? `${err.message} (${err.cause.code})` : (err?.message ?? String(e));
      throw new SvcError({
        code: timedOut ? 'timeout' : err?.name === 'AbortError' ? 'aborted' : 'network_error',
        status: 0,
        message: timedOut ? `${method} ${path}: no answer within ${this.timeoutMs} ms` : `${method} ${path}: ${why}`,
        cause: e,
      });
    }
    this.lastRequestId = res.headers.get('x-request-id') ?? undefined;
    const cost = num(res.headers.get('x-svc-cost-usd'));
    this.lastCost =
      cost === undefined
        ? undefined
        : {
            cost_usd: cost,
            balance_usd: num(res.headers.get('x-svc-balance-usd')),
            vendor: res.headers.get('x-svc-vendor') ?? undefined,
            latency_ms: num(res.headers.get('x-svc-latency-ms')),
          };
    const text = await res.text();
    if (!res.ok) throw errorFromResponse(res, text);
    if (!text) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new SvcError({
        code: 'invalid_response',
        status: res.status,
        message: `${method} ${path}: the response is not JSON`,
        requestId: this.lastRequestId,
        cause: e,
      });
    }
  }

  /**
   * Create an anonymous account with a key and trial credit (no key needed). With a key set,
   * returns that account again. A client without a key adopts the new one.
   */
  async activate(body: ActivateRequest = {}, opts: RequestOptions = {}): Promise<ActivateResponse> {
    const r = await this.request<ActivateResponse>('POST', '/v1/activate', { ...opts, body });
    if (!this.apiKey) this.apiKey = r.primary_api_key;
    return r;
  }

  balance(opts: RequestOptions = {}): Promise<BalanceResponse> {
    return this.request('GET', '/v1/account/balance', opts);
  }

  account(opts: RequestOptions = {}): Promise<AccountSummaryResponse> {
    return this.request('GET', '/v1/account', opts);
  }

  /** One page of the project's keys (newest first); `next_cursor` fetches the next. */
  listKeys(query: ListQuery = {}, opts: RequestOptions = {}): Promise<KeyPage> {
    return this.request('GET', '/v1/account/keys', { ...opts, query: pageQuery(query) });
  }

  /** Every key, page after page: `for await (const k of client.iterateKeys()) …`. */
  iterateKeys(query: Omit<ListQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncIterableIterator<ProjectKeyItem> {
    return paginate((cursor) => this.listKeys({ ...query, cursor }, opts));
  }

  createKey(body: CreateKeyRequest, opts: RequestOptions = {}): Promise<CreatedKeyResponse> {
    return this.request('POST', '/v1/account/keys', { ...opts, body });
  }

  revokeKey(keyId: string, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.request('DELETE', `/v1/account/keys/${encodeURIComponent(keyId)}`, opts);
  }

  /** A new secret for the key; the old one keeps working for the gateway's grace period. */
  rotateKey(keyId: string, opts: RequestOptions = {}): Promise<RotatedKeyResponse> {
    return this.request('POST', `/v1/account/keys/${encodeURIComponent(keyId)}/rotate`, opts);
  }

  /** Start a wallet top-up; open `next_action_url` (the hosted checkout) to pay. */
  topup(body: TopupRequest, opts: RequestOptions = {}): Promise<TopupRecord> {
    return this.request('POST', '/v1/account/topup', { ...opts, body });
  }

  upgradeTier(body: UpgradeTierRequest, opts: RequestOptions = {}): Promise<AccountSummaryResponse> {
    return this.request('POST', '/v1/account/tier/upgrade', { ...opts, body });
  }

  usage(query: UsageQuery = {}, opts: RequestOptions = {}): Promise<UsageReport> {
    return this.request('GET', '/v1/account/usage', {
      ...opts,
      query: { from: query.from, to: query.to, group_by: query.group_by },
    });
  }
}
