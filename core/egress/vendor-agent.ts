import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, type ClientRequestArgs } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import type { Agent, buildConnector } from 'undici';
import { classifyAddress, isIpLiteral } from './address-policy.js';
import type { Egress } from './egress.js';
import { isMetadataAddress, isMetadataName } from './metadata.js';

// A vendor's connections under the egress rules (architecture.md: every outbound connection
// passes core/egress). The hosts the operator named in the vendor's own config (its base_url, an
// Ollama on 127.0.0.1, an SMTP relay on the private network) are the operator's choice and
// reached whatever `egress` says; any other host a vendor is sent to (a redirect, a URL in an
// answer, a certificate's address) is held to the egress rules. The metadata service is refused
// for every host, named or not, at each connection, with the address the check resolved.

type Cb = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;

const refused = (why: string) => Object.assign(new Error(`egress refused ${why}`), { code: 'EEGRESSREFUSED' });

/** Every http(s) URL's host in a vendor's config (lower case). */
export function configuredHosts(config: unknown): Set<string> {
  const hosts = new Set<string>();
  const walk = (v: unknown) => {
    if (typeof v === 'string') {
      if (!/^https?:\/\//i.test(v)) return;
      try {
        hosts.add(new URL(v).hostname.replace(/^\[|\]$/g, '').toLowerCase());
      } catch {
        // not a URL after all
      }
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(config);
  return hosts;
}

/** net.connect's lookup for a vendor: named hosts resolve freely but for metadata, others by the rules. */
export function vendorLookup(egress: Egress, named: Set<string>): LookupFunction {
  return (hostname, options, callback) => {
    const cb = callback as Cb;
    const host = hostname.toLowerCase();
    const answer = (list: { address: string; family: number }[]) => {
      const fam = (options as { family?: number }).family;
      const usable = fam === 4 || fam === 6 ? list.filter((a) => a.family === fam) : list;
      if (!usable.length)
        return cb(Object.assign(new Error(`no usable address for ${hostname}`), { code: 'ENOTFOUND' }));
      if ((options as { all?: boolean }).all) return cb(null, usable);
      cb(null, usable[0].address, usable[0].family);
    };
    if (isMetadataName(host)) return cb(refused(`${hostname}: the metadata service`));
    if (named.has(host))
      return dnsLookup(hostname, { all: true }, (err, found) => {
        if (err) return cb(err);
        const meta = found.find((a) => isMetadataAddress(a.address));
        if (meta) return cb(refused(`${hostname}: it resolves to the metadata service (${meta.address})`));
        answer(found);
      });
    egress.addresses(hostname, 'vendor').then(
      (checked) => {
        if (!checked.length) return cb(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }));
        answer(checked.map((v) => ({ address: v.address, family: v.family })));
      },
      (e: Error) => cb(refused(`${hostname}: ${e.message}`))
    );
  };
}

/**
 * An undici Agent whose every connection is checked: a name through `vendorLookup` (the address
 * connected to is the one checked), an address literal against the same rules before connecting.
 */
export function vendorAgent(
  undici: { Agent: typeof Agent; buildConnector: typeof buildConnector },
  egress: Egress,
  named: Set<string>,
  opts: { keepAliveTimeout?: number; keepAliveMaxTimeout?: number } = {}
): Agent {
  const base = undici.buildConnector({ lookup: vendorLookup(egress, named) } as any);
  const connect: buildConnector.connector = (o, cb) => {
    const host = o.hostname.replace(/^\[|\]$/g, '');
    if (!isIpLiteral(host)) return base(o, cb);
    const v = classifyAddress(host);
    if (v.range === 'metadata') return cb(refused(`${host}: the metadata service`), null);
    if (named.has(host.toLowerCase())) return base(o, cb);
    egress.addresses(host, 'vendor').then(
      () => base(o, cb),
      (e: Error) => cb(refused(`${host}: ${e.message}`), null)
    );
  };
  return new undici.Agent({ connect, ...opts });
}

/** An IP literal's verdict for a vendor (a name is judged by `vendorLookup` as it resolves): the error, or none. */
async function literalRefusal(egress: Egress, named: Set<string>, host: string): Promise<Error | undefined> {
  if (!isIpLiteral(host)) return undefined;
  if (classifyAddress(host).range === 'metadata') return refused(`${host}: the metadata service`);
  if (named.has(host.toLowerCase())) return undefined;
  return egress.addresses(host, 'vendor').then(
    () => undefined,
    (e: Error) => refused(`${host}: ${e.message}`)
  );
}

type ConnectCb = (err: Error | null, socket?: Socket) => void;

/** node:http(s) Agents (for an SDK that takes them: the AWS SDK, minio) under the same rules as `vendorAgent`. */
export function vendorNodeAgents(egress: Egress, named: Set<string>): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
  const lookup = vendorLookup(egress, named);
  const guarded = <A extends HttpAgent>(agent: A): A => {
    const create = agent.createConnection.bind(agent) as (o: ClientRequestArgs, cb?: ConnectCb) => Socket;
    agent.createConnection = ((o: ClientRequestArgs, cb?: ConnectCb) => {
      const host = String(o.hostname ?? o.host ?? 'localhost').replace(/^\[|\]$/g, '');
      literalRefusal(egress, named, host).then((err) => {
        if (err) return cb?.(err);
        let socket: Socket;
        try {
          socket = create({ ...o, lookup } as ClientRequestArgs);
        } catch (e) {
          return cb?.(e as Error);
        }
        cb?.(null, socket);
      });
      return undefined;
    }) as never;
    return agent;
  };
  return {
    httpAgent: guarded(new HttpAgent({ keepAlive: true, lookup } as never)),
    httpsAgent: guarded(new HttpsAgent({ keepAlive: true, lookup } as never)),
  };
}

/**
 * The network a vendor instance is given: a fetch and an Agent for undici's `request`, both on
 * one checked Agent (undici loaded on the first call). Closed with the app.
 */
export class VendorNetwork {
  readonly #agents: Promise<Agent>[] = [];
  readonly #nodeAgents: HttpAgent[] = [];

  constructor(private readonly egress: Egress) {}

  for(config: unknown): {
    fetch: typeof globalThis.fetch;
    agent: () => Promise<Agent>;
    nodeAgents: () => ReturnType<typeof vendorNodeAgents>;
  } {
    const named = configuredHosts(config);
    let nodeAgents: ReturnType<typeof vendorNodeAgents> | undefined;
    const getNode = () => {
      if (!nodeAgents) {
        nodeAgents = vendorNodeAgents(this.egress, named);
        this.#nodeAgents.push(nodeAgents.httpAgent, nodeAgents.httpsAgent);
      }
      return nodeAgents;
    };
    let agent: Promise<Agent> | undefined;
    let fetcher: Promise<typeof import('undici').fetch> | undefined;
    const get = () => {
      if (!agent) {
        agent = import('undici').then((u) =>
          vendorAgent(u, this.egress, named, { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 })
        );
        this.#agents.push(agent);
      }
      return agent;
    };
    const fetch = (async (input: any, init?: any) => {
      fetcher ??= import('undici').then((u) => u.fetch);
      const [f, dispatcher] = await Promise.all([fetcher, get()]);
      // A FormData of Node's own fetch is not one to the undici package's: sent as the bytes Node makes of it.
      if (init?.body instanceof globalThis.FormData) {
        const form = new Response(init.body);
        const headers = new Headers(init.headers);
        headers.set('content-type', form.headers.get('content-type')!);
        init = { ...init, headers, body: Buffer.from(await form.arrayBuffer()) };
      }
      return f(input, { ...init, dispatcher });
    }) as unknown as typeof globalThis.fetch;
    return { fetch, agent: get, nodeAgents: getNode };
  }

  async close(): Promise<void> {
    for (const a of this.#nodeAgents) a.destroy();
    await Promise.all(this.#agents.map(async (a) => (await a).close().catch(() => undefined)));
  }
}
