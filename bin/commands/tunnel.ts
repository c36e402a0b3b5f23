import { SvcClient, SvcError } from '../../client/index.js';
import { credentialsPath, readCredentials } from '../credentials.js';
import { recall, remember, tunnelStatePath, type RememberedTunnel } from '../tunnel-state.js';
import { UsageError, err, out, type Command } from './command.js';

const DEFAULT_URL = 'http://127.0.0.1:8787';

/**
 * Expose a local port at a public URL: reserve the record (with the stored key, or anonymous
 * without one), then keep one WebSocket to the gateway that carries every request to the port.
 * The record is remembered per gateway, port and subdomain, so a restart serves the same URL.
 */
export const tunnelCommand: Command = {
  name: 'tunnel',
  summary: 'expose a local port at {subdomain}.{tunnel_domain} through the gateway',
  help: `Usage: svc-gateway tunnel PORT [--subdomain NAME] [--url URL] [--ttl SECONDS] [--anonymous]

Reserves a public URL on the gateway (POST /v1/public-url) and forwards every request for it,
streamed both ways, WebSocket upgrades included, to http://127.0.0.1:PORT until interrupted.
A dropped connection is retried with the same URL; a restart reuses the URL it had
(remembered in tunnels.json beside the credentials file).

The key is SVC_API_KEY, else the credentials file that \`svc-gateway activate\` wrote for this
gateway. With neither (or --anonymous) the URL is anonymous: a random subdomain, a shorter life,
and a claim command to take it into an account later.

Options:
  --url URL          the gateway (default: the credentials file's, SVC_URL, or ${DEFAULT_URL})
  --subdomain NAME   the subdomain to hold (needs a key)
  --ttl SECONDS      the URL's life, 60 to 604800 (default 8 h)
  --local-host HOST  where the app listens (default 127.0.0.1)
  --anonymous        ignore the stored key
`,
  options: {
    url: { type: 'string' },
    subdomain: { type: 'string' },
    ttl: { type: 'string' },
    'local-host': { type: 'string' },
    anonymous: { type: 'boolean' },
  },
  positionals: true,
  async run(flags, positionals) {
    if (positionals.length !== 1) throw new UsageError('give one PORT');
    const port = Number(positionals[0]);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new UsageError(`PORT must be 1 to 65535 (got "${positionals[0]}")`);
    const ttl = flags.ttl === undefined ? undefined : Number(flags.ttl);
    if (ttl !== undefined && !Number.isInteger(ttl)) throw new UsageError('--ttl must be a number of seconds');
    const file = credentialsPath();
    const creds = readCredentials(file);
    const url = String(flags.url ?? process.env.SVC_URL ?? creds?.url ?? DEFAULT_URL).replace(/\/+$/, '');
    if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) address (got "${url}")`);
    const key = flags.anonymous
      ? undefined
      : (process.env.SVC_API_KEY ?? (creds?.url === url ? creds.api_key : undefined));
    const subdomain = flags.subdomain as string | undefined;
    if (subdomain !== undefined && !key) throw new UsageError('--subdomain needs a key (svc-gateway activate)');
    const client = new SvcClient({ baseUrl: url, apiKey: key });
    const stateFile = tunnelStatePath(file);

    let t: RememberedTunnel;
    let record;
    try {
      const kept = recall(stateFile, url, port, subdomain);
      const reuse = kept && (key ? !kept.token : !!kept.token) ? await stillLive(client, kept, !!key) : undefined;
      if (reuse) {
        t = reuse;
      } else if (key) {
        record = await client.publicUrl.create({ port, subdomain, ttl_seconds: ttl });
        t = { url_id: record.url_id, connect_url: record.connect_url };
      } else {
        record = await client.publicUrl.anonymous({ port, ttl_seconds: ttl });
        t = { url_id: record.url_id, connect_url: record.connect_url, token: record.token };
      }
    } catch (e) {
      if (!(e instanceof SvcError)) throw e;
      err(`svc-gateway tunnel: ${url}: ${e.message} (${e.code}).`);
      return 1;
    }
    remember(stateFile, url, port, subdomain, t);

    const { TunnelClient } = await import('../../plugins/public-url/tunnel-client.js');
    const tunnel = new TunnelClient({
      connectUrl: t.connect_url,
      secret: t.token ?? key!,
      port,
      host: (flags['local-host'] as string | undefined) ?? '127.0.0.1',
    });
    let first = true;
    tunnel.on('connected', (public_url: string) => {
      out(`${first ? 'Forwarding' : 'Reconnected'} ${public_url} -> http://127.0.0.1:${port} (${t.url_id})`);
      if (first && t.token) out(`Anonymous: claim it with POST /v1/public-url/${t.url_id}/claim and your key.`);
      first = false;
    });
    tunnel.on('disconnected', (code: number, reason: string) => err(`Disconnected (${code} ${reason}); retrying.`));
    tunnel.on('refused', (status: number, code: string, message: string) =>
      err(`svc-gateway tunnel: refused (${status} ${code}): ${message}`)
    );
    const done = new Promise<number>((resolve) => {
      tunnel.once('closed', () => resolve(first ? 1 : 0));
      process.once('SIGINT', () => tunnel.stop());
      process.once('SIGTERM', () => tunnel.stop());
    });
    tunnel.start();
    return done;
  },
};

/** The remembered record, when it can still be served; anonymous records are checked by connecting. */
async function stillLive(client: SvcClient, kept: RememberedTunnel, keyed: boolean) {
  if (!keyed) return kept;
  try {
    const r = await client.publicUrl.get(kept.url_id);
    return r.state === 'expired' ? undefined : kept;
  } catch (e) {
    if (e instanceof SvcError && e.status === 404) return undefined;
    throw e;
  }
}
