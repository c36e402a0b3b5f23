import { Agent as HttpAgent, request as httpRequest, type ClientRequestArgs } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';

// For a vendor whose SDK connects with node's http(s) Agents (the AWS SDK, the minio client):
// every connection it opens is a CONNECT tunnel through the gateway's egress proxy (the vendor
// context's `egressProxy`), which resolves the name, checks every address against the egress
// rules and connects to a checked one: an endpoint, or a URL in an answer, cannot reach a
// private or metadata address the rules refuse. TLS runs end to end inside the tunnel.

type Callback = (err: Error | null, stream: Duplex) => void;

/** A refusal by the proxy (403: the egress rules; 502: the target did not answer): nothing was sent. */
export class EgressRefused extends Error {
  readonly code = 'EPROXY';
  constructor(
    target: string,
    readonly status: number
  ) {
    super(`egress proxy refused ${target} (${status}${status === 403 ? ': the egress rules' : ''})`);
  }
}

function tunnel(proxyUrl: string, host: string, port: number): Promise<Duplex> {
  const proxy = new URL(proxyUrl);
  const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: proxy.hostname,
      port: Number(proxy.port),
      method: 'CONNECT',
      path: target,
      headers: { host: target },
      agent: false,
    });
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) return resolve(socket);
      socket.destroy();
      reject(new EgressRefused(target, res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

const portOf = (o: ClientRequestArgs, fallback: number) => Number(o.port) || fallback;
const hostOf = (o: ClientRequestArgs) => (o.hostname ?? o.host ?? 'localhost').replace(/^\[|\]$/g, '');

/** Plain HTTP over the egress proxy (an `http://` endpoint: a test's fake, a local relay). */
class EgressHttpAgent extends HttpAgent {
  constructor(private readonly proxy: () => Promise<string>) {
    super({ keepAlive: true });
  }

  override createConnection(options: ClientRequestArgs, cb?: Callback): undefined {
    this.proxy()
      .then((url) => tunnel(url, hostOf(options), portOf(options, 80)))
      .then(
        (socket) => cb?.(null, socket),
        (e: Error) => cb?.(e, undefined as never)
      );
    return undefined;
  }
}

/** HTTPS over the egress proxy: TLS inside the tunnel, verified against the host's name. */
class EgressHttpsAgent extends HttpsAgent {
  constructor(
    private readonly proxy: () => Promise<string>,
    ca: string
  ) {
    super({ keepAlive: true, ...(ca ? { ca } : {}) });
  }

  override createConnection(options: ClientRequestArgs, cb?: Callback): undefined {
    const host = hostOf(options);
    this.proxy()
      .then((url) => tunnel(url, host, portOf(options, 443)))
      .then(
        (socket) =>
          cb?.(null, tlsConnect({ ...(options as object), socket, ...(isIP(host) ? {} : { servername: host }) })),
        (e: Error) => cb?.(e, undefined as never)
      );
    return undefined;
  }
}

export interface EgressAgents {
  httpAgent: HttpAgent;
  httpsAgent: HttpsAgent;
}

/** The two agents an SDK's request handler (and `egressGet`) connects with; `ca` trusts a private CA too. */
export function egressAgents(proxy: () => Promise<string>, ca = ''): EgressAgents {
  return { httpAgent: new EgressHttpAgent(proxy), httpsAgent: new EgressHttpsAgent(proxy, ca) };
}

/** GET a URL through the agents: its status and body (at most `maxBytes`, else an error). */
export function egressGet(
  agents: EgressAgents,
  url: URL,
  opts: { signal: AbortSignal; maxBytes: number }
): Promise<{ status: number; body: string }> {
  const options = { method: 'GET', signal: opts.signal };
  return new Promise((resolve, reject) => {
    const req =
      url.protocol === 'https:'
        ? httpsRequest(url, { ...options, agent: agents.httpsAgent })
        : httpRequest(url, { ...options, agent: agents.httpAgent });
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > opts.maxBytes) req.destroy(new Error(`${url.host} answered more than ${opts.maxBytes} bytes`));
        else chunks.push(c);
      });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.once('error', reject);
    });
    req.end();
  });
}
