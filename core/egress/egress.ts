import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import type { ForwardProxy } from './forward-proxy.js';
import type { CoreConfig } from '../../config/schema.js';
import { ApiError, apiError, fieldError } from '../errors.js';
import { classifyAddress, isIpLiteral, type AddressVerdict } from './address-policy.js';
import { isMetadataName } from './metadata.js';
import { readBody } from './read-body.js';
import { decideLoopback, type LoopbackDecision, type Reachability } from './loopback.js';

export type EgressConfig = CoreConfig['egress'];

/** Name resolution, injectable so tests can make any name resolve anywhere. */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export interface EgressRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
  maxBytes?: number;
  signal?: AbortSignal;
  /** Follow redirects (each hop re-checked); false returns the 3xx as it is (webhooks). */
  followRedirects?: boolean;
  /** Name of the request field the URL came from, for the 400 a refused URL gives. */
  param?: string;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The final URL, after redirects. */
  url: string;
}

interface Pinned {
  addresses: AddressVerdict[];
  until: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const PIN_MS = 30_000;
const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * The one guarded outbound fetcher for URLs a caller hands the gateway (cron and webhook
 * targets, image and PDF inputs). The host is resolved once and every address checked; the
 * connection then goes to that checked address (the agent's `lookup` answers from the pin,
 * and checks again whatever it has to resolve itself), so a name that re-resolves to a
 * private address between the check and the connect (DNS rebinding) cannot get through.
 */
export class Egress {
  readonly cfg: EgressConfig;
  private readonly resolve: Resolver;
  private readonly pins = new Map<string, Pinned>();
  // undici (~20 MB, ~100 ms to load) is loaded on the first outbound fetch, not at start:
  // most requests never fetch a caller's URL.
  private undici?: Promise<{ agent: Agent; request: typeof import('undici').request }>;
  private forwardProxy?: Promise<ForwardProxy>;

  /** Whether loopback targets are allowed, and why (egress.allow_loopback and the listen address). */
  readonly loopback: LoopbackDecision;

  /** `reach`: how the gateway is reached (server.host, public_url, trust_proxy), which `allow_loopback: auto` decides by. */
  constructor(cfg: EgressConfig, opts: { resolver?: Resolver; reach?: Reachability } = {}) {
    this.cfg = cfg;
    this.resolve = opts.resolver ?? systemResolver;
    // Without a listen address (the gateway is not the caller) auto cannot know it is safe.
    this.loopback = decideLoopback(cfg.allow_loopback, opts.reach ?? { listenHost: '0.0.0.0' });
  }

  private allowsHost(host: string): boolean {
    return this.cfg.allow_hosts.some((h) => h.toLowerCase() === host.toLowerCase());
  }

  private verdictAllowed(v: AddressVerdict, host: string): boolean {
    // The metadata service hands out the machine's credentials: no setting reaches it.
    if (v.range === 'metadata') return false;
    if (v.ok || this.allowsHost(host)) return true;
    if (v.range === 'loopback' && this.loopback.allowed) return true;
    return this.cfg.allow_private;
  }

  /** Parse and check a URL: scheme, host, every address it resolves to. Returns the URL and pins the addresses. */
  async check(raw: string | URL, param = 'url'): Promise<URL> {
    let url: URL;
    try {
      url = typeof raw === 'string' ? new URL(raw) : raw;
    } catch {
      throw fieldError(param, 'is not an absolute URL', `${param} is not an absolute URL.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw fieldError(
        param,
        'must use http or https',
        `${param} must be an http or https URL (got ${url.protocol.replace(':', '')}).`
      );
    }
    if (url.username || url.password)
      throw fieldError(
        param,
        'must not contain user:password',
        `${param} must not carry credentials in the URL; send them as headers.`
      );
    await this.addresses(url.hostname, param);
    return url;
  }

  /**
   * Resolve a host (a name or an address literal) and check every address it has; they are
   * pinned for the connection. [] for a name that does not resolve yet (a receiver not deployed
   * yet cannot point anywhere now; every fetch resolves and checks again). Throws the refusal.
   */
  async addresses(hostname: string, param = 'url'): Promise<AddressVerdict[]> {
    const host = hostname.replace(/^\[|\]$/g, '');
    if (isMetadataName(host)) throw metadataRefused(param, host);
    let verdicts: AddressVerdict[];
    if (isIpLiteral(host)) {
      verdicts = [classifyAddress(host)];
    } else {
      let found: { address: string; family: number }[];
      try {
        found = await this.resolve(host);
      } catch {
        found = [];
      }
      if (!found.length) return [];
      verdicts = found.map((f) => classifyAddress(f.address));
    }
    const bad = verdicts.find((v) => !this.verdictAllowed(v, host));
    if (bad?.range === 'metadata') throw metadataRefused(param, bad.address);
    if (bad) {
      const how =
        bad.range === 'loopback'
          ? `Loopback targets are refused because ${this.loopback.why}; `
            + 'an operator can allow them with egress.allow_loopback: true.'
          : 'An operator can allow it with egress.allow_private or egress.allow_hosts.';
      const what = `${param} points at a ${bad.range} address (${bad.address}), which the gateway does not call.`;
      throw fieldError(param, `resolves to a ${bad.range} address`, `${what} ${how}`);
    }
    if (!isIpLiteral(host)) this.pins.set(host.toLowerCase(), { addresses: verdicts, until: Date.now() + PIN_MS });
    return verdicts;
  }

  // net.connect's lookup: answer from the pin the check made; resolve and check afresh
  // only when the pin has expired (a pooled connection reconnecting much later).
  private pinnedLookup: LookupFunction = (hostname, options, callback) => {
    const cb = callback as (err: Error | null, address: any, family?: number) => void;
    const host = hostname.toLowerCase();
    const reply = (list: AddressVerdict[]) => {
      const fam = (options as { family?: number }).family;
      const usable = fam === 4 || fam === 6 ? list.filter((a) => a.family === fam) : list;
      if (!usable.length)
        return cb(Object.assign(new Error(`no usable address for ${hostname}`), { code: 'ENOTFOUND' }), undefined);
      if ((options as { all?: boolean }).all)
        return cb(
          null,
          usable.map((a) => ({ address: a.address, family: a.family }))
        );
      return cb(null, usable[0].address, usable[0].family);
    };
    const pin = this.pins.get(host);
    if (pin && pin.until > Date.now()) return reply(pin.addresses);
    this.addresses(hostname).then(
      (fresh) => {
        if (!fresh.length)
          return cb(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), undefined);
        reply(fresh);
      },
      (e: Error) => {
        cb(Object.assign(new Error(`egress refused ${hostname}: ${e.message}`), { code: 'EEGRESSREFUSED' }), undefined);
      }
    );
  };

  /** Fetch a caller-supplied URL under the egress rules; caps on time, size and redirects. */
  async fetch(raw: string, opts: EgressRequest = {}): Promise<EgressResponse> {
    const param = opts.param ?? 'url';
    const timeoutMs = opts.timeoutMs ?? this.cfg.timeout_ms;
    const maxBytes = opts.maxBytes ?? this.cfg.max_bytes;
    const follow = opts.followRedirects ?? true;
    const timer = new AbortController();
    const t = setTimeout(() => timer.abort(), timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timer.signal, opts.signal]) : timer.signal;
    let method = (opts.method ?? 'GET').toUpperCase();
    let body = opts.body;
    let headers = { ...(opts.headers ?? {}) };
    let url: URL;
    try {
      url = await this.check(raw, param);
    } catch (e) {
      clearTimeout(t); // a refused URL must not leave the timer holding the process open
      throw e;
    }
    try {
      for (let hop = 0; ; hop++) {
        const { agent, request } = await this.client();
        const res = await request(url, { method: method as any, headers, body, signal, dispatcher: agent });
        const resHeaders = flatHeaders(res.headers);
        if (follow && REDIRECTS.has(res.statusCode) && resHeaders.location) {
          res.body.resume();
          if (hop >= this.cfg.max_redirects)
            throw apiError('unprocessable', `${param}: more than ${this.cfg.max_redirects} redirects.`, { param });
          const next = new URL(resHeaders.location, url);
          if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
            method = method === 'HEAD' ? 'HEAD' : 'GET';
            body = undefined;
            headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
          }
          // Credentials meant for one origin do not follow a redirect to another.
          if (next.origin !== url.origin)
            headers = Object.fromEntries(
              Object.entries(headers).filter(([k]) => !/^(authorization|cookie|proxy-authorization)$/i.test(k))
            );
          url = await this.check(next, param);
          continue;
        }
        const declared = Number(resHeaders['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          res.body.destroy();
          throw tooLarge(param, maxBytes);
        }
        const data = await readBody(res.body, declared, maxBytes, () => {
          res.body.destroy();
          return tooLarge(param, maxBytes);
        });
        return { status: res.statusCode, headers: resHeaders, body: data, url: url.toString() };
      }
    } catch (e) {
      if (e instanceof ApiError) throw e;
      if (timer.signal.aborted)
        throw apiError('fetch_timeout', `${url.host} did not answer within ${timeoutMs} ms.`, {
          param,
          details: { timeout_ms: timeoutMs },
        });
      if (opts.signal?.aborted) throw e;
      const err = e as { code?: string; message?: string };
      if (err.code === 'EEGRESSREFUSED' || String(err.message).includes('egress refused')) {
        throw fieldError(
          param,
          'resolves to a refused address',
          `${param}: ${url.host} now resolves to an address the gateway does not call.`
        );
      }
      throw apiError(
        'fetch_failed',
        `${url.host} could not be reached: ${err.code ?? err.message ?? 'connection failed'}.`,
        { param, details: { cause: err.code ?? 'error' } }
      );
    } finally {
      clearTimeout(t);
    }
  }

  private client() {
    this.undici ??= import('undici').then(({ Agent, request }) => ({
      agent: new Agent({ connect: { lookup: this.pinnedLookup }, connections: 256, keepAliveTimeout: 4_000 }),
      request,
    }));
    return this.undici;
  }

  /**
   * The URL of a forward proxy under these rules (forward-proxy.ts), started on first use:
   * for a browser, whose every connection must pass the guard.
   */
  proxyUrl(): Promise<string> {
    this.forwardProxy ??= import('./forward-proxy.js').then(({ ForwardProxy }) => ForwardProxy.start(this));
    const starting = this.forwardProxy;
    starting.catch(() => {
      if (this.forwardProxy === starting) this.forwardProxy = undefined;
    });
    return starting.then((p) => p.url);
  }

  async close(): Promise<void> {
    if (this.undici) await (await this.undici).agent.close();
    await (await this.forwardProxy?.catch(() => undefined))?.close();
  }
}

function metadataRefused(param: string, what: string): ApiError {
  return fieldError(
    param,
    'is the cloud metadata service',
    `${param} points at a cloud metadata address (${what}), which the gateway never calls, whatever its configuration.`
  );
}

function tooLarge(param: string, maxBytes: number): ApiError {
  return apiError('payload_too_large', `The response from ${param} is over the cap of ${maxBytes} bytes.`, {
    param,
    details: { max_bytes: maxBytes },
  });
}

function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h))
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
