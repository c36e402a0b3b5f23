import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/load.js';
import { buildApp } from '../../core/app.js';
import { createLogger } from '../../core/logger.js';
import { freshDatabaseUrl } from '../helpers/app.js';
import { captureLog } from '../helpers/log-lines.js';

// database-independent: what reaches the log; the key and secret rows are their areas' tests', on both.

const ADMIN_KEY = 'adm_Zq8sV1xL4pT7nR2wK9yB3cD6fG0hJ5mQ';

function leaks(lines: string[], secrets: string[]): string[] {
  return lines.filter((l) => secrets.some((s) => l.includes(s)));
}

t.test('no key, secret or admin key reaches the log at level trace', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redact-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = loadConfig({
    object: {
      data_dir: dir,
      database: { url: await freshDatabaseUrl(t, dir) },
      admin_key: ADMIN_KEY,
      limits: { activate_per_hour: 1000 },
    },
    env: {},
  });
  const { lines, stream } = captureLog();
  const app = await buildApp(config, { logger: createLogger('trace', stream) });
  t.teardown(() => app.close());
  await app.ready();

  const act = await app.inject({ method: 'POST', url: '/v1/activate', payload: {} });
  t.equal(act.statusCode, 200);
  const key: string = act.json().primary_api_key;
  const secrets = [key, ADMIN_KEY];
  const bearer = { authorization: `Bearer ${key}` };

  const calls: Array<Parameters<typeof app.inject>[0]> = [
    { method: 'GET', url: '/v1/account/balance', headers: bearer },
    { method: 'GET', url: '/v1/account', headers: { 'x-api-key': key } },
    { method: 'POST', url: '/v1/activate', headers: bearer, payload: {} }, // the key again, in the response
    { method: 'GET', url: '/v1/account/balance', headers: { authorization: `Bearer ${ADMIN_KEY}` } }, // admin key on a tenant route
    { method: 'GET', url: '/v1/admin/accounts', headers: { authorization: `Bearer ${ADMIN_KEY}` } },
    {
      method: 'GET',
      url: '/v1/account/balance',
      headers: { authorization: 'Bearer sk_live_00000000000000000000000000000000' },
    },
    { method: 'GET', url: '/v1/no/such/route', headers: { 'x-api-key': key } },
    // The key inside a malformed body and in a field that is not allowed.
    {
      method: 'POST',
      url: '/v1/account/keys',
      headers: { ...bearer, 'content-type': 'application/json' },
      payload: `{"label": ${key}`,
    },
    { method: 'POST', url: '/v1/account/keys', headers: bearer, payload: { label: 'x', secret: key } },
  ];
  for (const c of calls) await app.inject(c);

  const created = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: { ...bearer, 'idempotency-key': 'k1' },
    payload: { label: 'ci' },
  });
  t.equal(created.statusCode, 200);
  secrets.push(created.json().secret);
  const replay = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: { ...bearer, 'idempotency-key': 'k1' },
    payload: { label: 'ci' },
  });
  t.equal(replay.headers['idempotent-replayed'], 'true');
  const rotated = await app.inject({
    method: 'POST',
    url: `/v1/account/keys/${created.json().key_id}/rotate`,
    headers: bearer,
  });
  t.equal(rotated.statusCode, 200);
  secrets.push(rotated.json().secret);
  await app.inject({
    method: 'GET',
    url: '/v1/account/keys',
    headers: { authorization: `Bearer ${rotated.json().secret}` },
  });
  await app.inject({
    method: 'DELETE',
    url: `/v1/account/keys/${rotated.json().key_id}`,
    headers: { 'x-api-key': created.json().secret },
  });

  // The add-funds link is a bearer credential for the account's top-ups: its token stays out too.
  const link = new URL(act.json().checkout_url).pathname;
  const token = link.split('/').at(-1)!;
  t.match(token, /^svt1\./);
  secrets.push(token.slice('svt1.'.length, 'svt1.'.length + 16), token.split('.')[2]);
  await app.inject({ method: 'GET', url: link });
  await app.inject({ method: 'GET', url: `${link}?amount=12` });
  await app.inject({
    method: 'POST',
    url: link,
    payload: 'amount_usd=10',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.ok(
    lines.some((l) => l.includes('/checkout/topup/')),
    'the page requests were logged'
  );

  t.ok(lines.filter((l) => l.includes('"incoming request"')).length >= calls.length + 8, 'every request was logged');
  t.equal(app.log.level, 'trace', 'the capture runs at trace');
  t.same(leaks(lines, secrets), [], 'no secret in any log line');
});

t.test('the logger censors secrets wherever a log call puts them', async (t) => {
  const { lines, stream } = captureLog();
  const log = createLogger('trace', stream);
  const s = 'sk_live_SECRETSECRETSECRETSECRETSECRET12';
  log.info(
    { req: { headers: { authorization: `Bearer ${s}`, 'x-api-key': s, cookie: `sid=${s}` } } },
    'request headers'
  );
  log.info({ headers: { authorization: `Bearer ${s}`, 'x-api-key': s } }, 'bare headers');
  log.info(
    { body: { primary_api_key: s }, key: { secret: s }, vendor: { config: { api_key: s, password: s } } },
    'bodies and configs'
  );
  log.info(
    { secret: s, api_key: s, token: s, admin_key: s, master_key: s, primary_api_key: s, credentials: { x: s } },
    'top level'
  );
  log.child({ vendor: 'openai' }).warn({ response: { data: { api_key: s } } }, 'two levels down');
  log.info({ byok: { credentials: { api_key: s } } }, 'byok credentials');
  t.equal(lines.length, 6);
  t.same(leaks(lines, [s]), [], 'censored everywhere');
  t.ok(
    lines.every((l) => l.includes('[redacted]')),
    'replaced with [redacted], not dropped'
  );
});
