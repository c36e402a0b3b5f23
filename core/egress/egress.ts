import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import type { CoreConfig } from '../../config/schema.js';
import { ApiError, apiError } from '../errors.js';
import { classifyAddress, isIpLiteral, type AddressVerdict } from './address-policy.js';
import { decideLoopback, type LoopbackDecision } from './loopback.js';

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

function refused(param: string, message: string, reason: string): ApiError {
  return apiError('validation_failed', message, { param, details: { errors: [{ param, message: reason }] } });
}

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

  /** Whether loopback targets are allowed, and why (egress.allow_loopback and the listen address). */
  readonly loopback: LoopbackDecision;

  /** `listenHost`: server.host, which `egress.allow_loopback: auto` decides by. */
  constructor(cfg: EgressConfig, opts: { resolver?: Resolver; listenHost?: string } = {}) {
    this.cfg = cfg;
    this.resolve = opts.resolver ?? systemResolver;
    // Without a listen address (the gateway is not the caller) auto cannot know it is safe.
    this.loopback = decideLoopback(cfg.allow_loopback, opts.listenHost ?? '0.0.0.0');
  }

  private allowsHost(host: string): boolean {
    return this.cfg.allow_hosts.some((h) => h.toLowerCase() === host.toLowerCase());
  }

  private verdictAllowed(v: AddressVerdict, host: string): boolean {
    if (v.ok || this.allowsHost(host)) return true;
    if (v.range === 'loopback' && this.loopback.allowed) return true;
    // The metadata service is never a private target an operator means to reach.
    return this.cfg.allow_private && v.range !== 'metadata';
  }

  /** Parse and check a URL: scheme, host, every address it resolves to. Returns the URL and pins the addresses. */
  async check(raw: string | URL, param = 'url'): Promise<URL> {
    let url: URL;
    try {
      url = typeof raw === 'string' ? new URL(raw) : raw;
    } catch {
      throw refused(param, `${param} is not an absolute URL.`, 'is not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw refused(
        param,
        `${param} must be an http or https URL (got ${url.protocol.replace(':', '')}).`,
        'must use http or https'
      );
    }
    if (url.username || url.password)
      throw refused(
        param,
        `${param} must not carry credentials in the URL; send them as headers.`,
        'must not contain user:password'
      );
    const host = url.hostname.replace(/^\[|\]$/g, '');
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
      // A name that does not resolve yet (a receiver not deployed yet) cannot point anywhere
      // now; every fetch resolves and checks again, so it is accepted here.
      if (!found.length) return url;
      verdicts = found.map((f) => classifyAddress(f.address));
    }
    const bad = verdicts.find((v) => !this.verdictAllowed(v, host));
    if (bad) {
      const how =
        bad.range === 'loopback'
          ? `Loopback targets are refused because ${this.loopback.why}; `
            + 'an operator can allow them with egress.allow_loopback: true.'
          : 'An operator can allow it with egress.allow_private or egress.allow_hosts.';
      const what = `${param} points at a ${bad.range} address (${bad.address}), which the gateway does not call.`;
      throw refused(param, `${what} ${how}`, `resolves to a ${bad.range} address`);
    }
    if (!isIpLiteral(host)) this.pins.set(host.toLowerCase(), { addresses: verdicts, until: Date.now() + PIN_MS });
    return url;
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
    this.check(`http://${hostname.includes(':') ? `[${hostname}]` : hostname}/`, 'url').then(
      () => {
        const fresh = this.pins.get(host);
        if (!fresh)
          return cb(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), undefined);
        reply(fresh.addresses);
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
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          size += chunk.length;
          if (size > maxBytes) {
            res.body.destroy();
            throw tooLarge(param, maxBytes);
          }
          chunks.push(chunk as Buffer);
        }
        return { status: res.statusCode, headers: resHeaders, body: Buffer.concat(chunks), url: url.toString() };
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
        throw refused(
          param,
          `${param}: ${url.host} now resolves to an address the gateway does not call.`,
          'resolves to a refused address'
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

  async close(): Promise<void> {
    if (this.undici) await (await this.undici).agent.close();
  }
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
