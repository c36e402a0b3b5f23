import t from 'tap';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { makeApp } from '../helpers/app.js';
import { cliEnv, runCli } from './fixtures/cli.js';

// database-independent: the CLI's credentials file and output; activation's rows are account/activate's, on both.

async function gateway(t: Parameters<typeof makeApp>[0]) {
  const { app } = await makeApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

t.test('activate writes the credentials file 0600 in a 0700 dir and prints the key once, on stdout', async (t) => {
  const { app, url } = await gateway(t);
  const { env, home } = await cliEnv(t);
  const r = await runCli(['activate', '--url', url, '--region', 'western'], { env });
  t.equal(r.code, 0, r.stderr);
  const file = join(home, 'xdg', 'svc-gateway', 'credentials.json');
  t.equal(statSync(file).mode & 0o777, 0o600, 'file mode 0600');
  t.equal(statSync(join(file, '..')).mode & 0o777, 0o700, 'dir mode 0700');
  const creds = JSON.parse(readFileSync(file, 'utf8'));
  t.same(Object.keys(creds).sort(), ['account_id', 'api_key', 'project_id', 'url']);
  t.equal(creds.url, url);
  t.match(creds.api_key, /^sk_live_[0-9A-Za-z]{32}$/);
  t.equal(r.stdout.split(creds.api_key).length - 1, 1, 'the key is printed once');
  t.match(r.stdout, `Credentials written to ${file}`);
  t.match(r.stdout, `on ${url} (--url), trial credit 5 USD.`, 'says the URL it used and where it came from');
  t.notOk(r.stderr.includes(creds.api_key), 'never on stderr');

  // The key works, and the account is the one the file names, in the region asked for.
  const acct = await app.inject({
    method: 'GET',
    url: '/v1/account',
    headers: { authorization: `Bearer ${creds.api_key}` },
  });
  t.equal(acct.statusCode, 200);
  t.match(acct.json(), { account_id: creds.account_id, project_id: creds.project_id, region: 'western' });

  // Again: the stored key is sent, the same account comes back, no new trial credit.
  const again = await runCli(['activate', '--url', url], { env });
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, /Already activated: account /);
  t.notOk(again.stdout.includes(creds.api_key), 'a key already stored is not printed again');
  t.equal(JSON.parse(readFileSync(file, 'utf8')).account_id, creds.account_id);
  t.equal((await app.svc.db.selectFrom('accounts').select('account_id').execute()).length, 1);
  t.equal(statSync(file).mode & 0o777, 0o600, 'still 0600 after the rewrite');
});

t.test('--no-write prints the key and writes nothing; HOME/.config without XDG_CONFIG_HOME', async (t) => {
  const { url } = await gateway(t);
  const { env, home } = await cliEnv(t);
  const r = await runCli(['activate', '--url', url, '--no-write'], { env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /API key: sk_live_[0-9A-Za-z]{32}\n/);
  t.match(r.stdout, /Nothing written/);
  t.notOk(existsSync(join(home, 'xdg')), 'no credentials dir');

  const noXdg = { ...env };
  delete noXdg.XDG_CONFIG_HOME;
  const d = await runCli(['activate', '--url', url], { env: noXdg });
  t.equal(d.code, 0, d.stderr);
  const file = join(home, '.config', 'svc-gateway', 'credentials.json');
  t.equal(statSync(file).mode & 0o777, 0o600);
  const kept = readFileSync(file, 'utf8');
  t.equal(JSON.parse(kept).url, url);

  // Another gateway: the key already stored is not overwritten without --force.
  const other = url.replace('127.0.0.1', 'localhost');
  const refused = await runCli(['activate', '--url', other], { env: noXdg });
  t.equal(refused.code, 1);
  t.match(refused.stderr, /holds the key of account acct_\w+ on http:\/\/127\.0\.0\.1:\d+\. Pass --force/);
  t.equal(readFileSync(file, 'utf8'), kept, 'the stored key is untouched');
  const forced = await runCli(['activate', '--url', other, '--force'], { env: noXdg });
  t.equal(forced.code, 0, forced.stderr);
  t.equal(JSON.parse(readFileSync(file, 'utf8')).url, other);
});

t.test('activate fails clearly: bad flags 2, no gateway 1, a revoked stored key 1', async (t) => {
  const { app, url } = await gateway(t);
  const { env, home } = await cliEnv(t);
  const [region, badUrl] = await Promise.all([
    runCli(['activate', '--url', url, '--region', 'mars'], { env }),
    runCli(['activate', '--url', 'ftp://x'], { env }),
  ]);
  t.equal(region.code, 2);
  t.match(region.stderr, /--region must be one of auto, western, china/);
  t.equal(badUrl.code, 2);

  const ok = await runCli(['activate', '--url', url], { env });
  t.equal(ok.code, 0, ok.stderr);
  const creds = JSON.parse(readFileSync(join(home, 'xdg', 'svc-gateway', 'credentials.json'), 'utf8'));
  const keys = await app.inject({
    method: 'GET',
    url: '/v1/account/keys',
    headers: { authorization: `Bearer ${creds.api_key}` },
  });
  const revoke = await app.inject({
    method: 'DELETE',
    url: `/v1/account/keys/${keys.json().items[0].key_id}`,
    headers: { authorization: `Bearer ${creds.api_key}` },
  });
  t.equal(revoke.statusCode, 200);
  const stale = await runCli(['activate', '--url', url], { env });
  t.equal(stale.code, 1);
  t.match(stale.stderr, /unknown, revoked or expired.*\(unauthenticated, request req_/);
  t.notOk(stale.stderr.includes(creds.api_key));

  await app.close();
  const down = await runCli(['activate', '--url', url, '--no-write'], { env });
  t.equal(down.code, 1);
  t.match(down.stderr, /POST \/v1\/activate: fetch failed \(ECONNREFUSED\) \(network_error\)/);
  t.match(down.stderr, `svc-gateway activate: ${url} (--url): `, 'names the URL it tried');
  t.match(down.stderr, /Is the gateway running there\? `npm start` serves on 127\.0\.0\.1:8787 \(--port or SVC_PORT/);
  const byEnv = await runCli(['activate', '--no-write'], { env: { ...env, SVC_URL: url } });
  t.equal(byEnv.code, 1);
  t.match(byEnv.stderr, `svc-gateway activate: ${url} (SVC_URL): `, 'and where that URL came from');
});
