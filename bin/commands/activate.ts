import { SvcClient, SvcError } from '../../client/index.js';
import { credentialsPath, readCredentials, writeCredentials } from '../credentials.js';
import { UsageError, err, out, type Command } from './command.js';

const REGIONS = ['auto', 'western', 'china'];
const DEFAULT_URL = 'http://127.0.0.1:8787';

/**
 * Create an account on a gateway and keep its key in the user's credentials file. Run again
 * against the same gateway, it sends the stored key and gets the same account back (no second
 * trial credit), so it is safe to repeat. The key goes to stdout once and never to stderr.
 */
export const activateCommand: Command = {
  name: 'activate',
  summary: 'create an account and store its key in the credentials file',
  help: `Usage: svc-gateway activate [--url URL] [--region auto|western|china] [--no-write] [--force]

Calls POST /v1/activate on the gateway (default ${DEFAULT_URL}, or SVC_URL) and writes
{ url, api_key, account_id, project_id } to
  $XDG_CONFIG_HOME/svc-gateway/credentials.json   (default ~/.config/svc-gateway/credentials.json)
with mode 0600 in a directory of mode 0700. When that file already holds a key for the same
gateway, the call sends it and the same account comes back; delete the file for a new one.
A file that holds the key of another gateway is kept unless --force is given.

Options:
  --url URL       the gateway's address
  --region R      auto (default), western or china
  --no-write      print the key and write nothing
  --force         replace a credentials file that holds the key of another gateway
`,
  options: {
    url: { type: 'string' },
    region: { type: 'string' },
    'no-write': { type: 'boolean' },
    force: { type: 'boolean' },
  },
  async run(flags) {
    const url = String(flags.url ?? process.env.SVC_URL ?? DEFAULT_URL).replace(/\/+$/, '');
    // Said on success and on failure: a gateway started on another port is the usual miss.
    const from =
      flags.url !== undefined
        ? '--url'
        : process.env.SVC_URL !== undefined
          ? 'SVC_URL'
          : 'the default; --url or SVC_URL for another';
    if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) address (got "${url}")`);
    const region = (flags.region as string | undefined) ?? 'auto';
    if (!REGIONS.includes(region))
      throw new UsageError(`--region must be one of ${REGIONS.join(', ')} (got "${region}")`);
    const write = !flags['no-write'];
    const file = credentialsPath();
    const stored = write ? readCredentials(file) : undefined;
    // The file holds one key; an anonymous account whose key is lost cannot be recovered.
    if (stored && stored.url !== url && !flags.force) {
      err(
        `svc-gateway activate: ${file} holds the key of account ${stored.account_id} on ${stored.url}. Pass --force to replace it, or --no-write.`
      );
      return 1;
    }
    const returning = stored?.url === url;
    const client = new SvcClient({ baseUrl: url, apiKey: returning ? stored.api_key : undefined });
    let r;
    try {
      r = await client.activate({
        region: region as 'auto' | 'western' | 'china',
        write_credentials: write,
        device_kind: 'cli',
      });
    } catch (e) {
      if (!(e instanceof SvcError)) throw e;
      const down =
        e.code === 'network_error'
          ? ' Is the gateway running there? `npm start` serves on 127.0.0.1:8787 (--port or SVC_PORT for another).'
          : '';
      err(
        `svc-gateway activate: ${url} (${from}): ${e.message} (${e.code}${e.requestId ? `, request ${e.requestId}` : ''}).${down}`
      );
      return 1;
    }
    out(
      `${returning ? 'Already activated' : 'Activated'}: account ${r.account_id}, project ${r.project_id} on ${url} (${from})${returning ? '' : `, trial credit ${r.trial_credit_usd} USD`}.`
    );
    if (write) {
      writeCredentials(file, { url, api_key: r.primary_api_key, account_id: r.account_id, project_id: r.project_id });
      out(`Credentials written to ${file} (mode 0600).`);
    } else {
      out('Nothing written (--no-write): keep the key, it is not shown again.');
    }
    if (!returning) out(`API key: ${r.primary_api_key}`);
    out(`Add funds: ${r.checkout_url}`);
    return 0;
  },
};
