import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

// database-independent: refused before any write; the area's rows are the other account tests', on both.

const TABLES = ['accounts', 'api_keys', 'wallets', 'wallet_ledger', 'wallet_holds', 'topups', 'idempotency_keys'];

async function counts(app: any) {
  const out: Record<string, number> = {};
  for (const table of TABLES)
    out[table] = (
      await app.svc.db.selectFrom(table).select(app.svc.db.fn.countAll().as('n')).executeTakeFirstOrThrow()
    ).n;
  for (const k of Object.keys(out)) out[k] = Number(out[k]);
  return out;
}

// [method, url, payload, params that details.errors must name (all of them, nothing else)]
type Case = [string, string, unknown, string[]];

const CASES: Case[] = [
  ['POST', '/v1/account/keys', { label: 5, scopes: 'x', extra: 1 }, ['label', 'scopes', 'extra']],
  [
    'POST',
    '/v1/account/keys',
    { label: 'ok', scopes: ['Bad Scope', 'storage:read', 'a:b:c'] },
    ['scopes[0]', 'scopes[2]'],
  ],
  ['POST', '/v1/account/keys', { scopes: [] }, ['label', 'scopes']],
  ['POST', '/v1/account/keys', { label: '', scopes: ['*', '*'] }, ['label', 'scopes']],
  ['POST', '/v1/account/keys', { label: 'x'.repeat(101) }, ['label']],
  [
    'POST',
    '/v1/account/topup',
    { amount_usd: '20', return_url: 'ftp://example.com', extra: true },
    ['amount_usd', 'return_url', 'extra'],
  ],
  ['POST', '/v1/account/topup', {}, ['amount_usd']],
  ['POST', '/v1/account/topup', { amount_usd: 4.99 }, ['amount_usd']],
  ['POST', '/v1/account/topup', { amount_usd: 10000.01 }, ['amount_usd']],
  ['POST', '/v1/account/topup', { amount_usd: -5 }, ['amount_usd']],
  ['POST', '/v1/account/topup', { amount_usd: null, return_url: 'not a url' }, ['amount_usd', 'return_url']],
  ['POST', '/v1/account/topup', { amount_usd: 20.001 }, ['amount_usd']],
  ['POST', '/v1/account/topup', { amount_usd: 20, idempotency_key: '' }, ['idempotency_key']],
  ['POST', '/v1/account/topup', [20], ['body']],
  ['POST', '/v1/account/tier/upgrade', { target_tier: 5, tier: 'pro' }, ['target_tier', 'tier']],
  ['POST', '/v1/account/tier/upgrade', {}, ['target_tier']],
  ['POST', '/v1/account/tier/upgrade', { target_tier: 'platinum' }, ['target_tier']],
  ['GET', '/v1/account/keys?limit=0', undefined, ['limit']],
  ['GET', '/v1/account/keys?limit=201&foo=1', undefined, ['limit', 'foo']],
  ['GET', '/v1/account/keys?cursor=garbage', undefined, ['cursor']],
  ['GET', '/v1/account/topups?limit=abc', undefined, ['limit']],
  ['GET', '/v1/account/topups?cursor=WzEsMl0', undefined, ['cursor']],
  ['DELETE', `/v1/account/keys/key_${'x'.repeat(70)}`, undefined, ['key_id']],
  ['POST', `/v1/account/keys/key_${'x'.repeat(70)}/rotate`, undefined, ['key_id']],
  ['GET', `/v1/account/topups/top_${'x'.repeat(70)}`, undefined, ['topup_id']],
];

t.test('bad input on every account endpoint is 400, names every bad field, and writes nothing', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const before = await counts(app);
  for (const [method, url, payload, params] of CASES) {
    const name = `${method} ${url.slice(0, 60)} ${JSON.stringify(payload) ?? ''}`;
    const res = await app.inject({
      method: method as any,
      url,
      headers: a.auth,
      ...(payload !== undefined ? { payload: payload as any } : {}),
    });
    t.equal(res.statusCode, 400, name);
    const e = res.json().error;
    t.equal(e.code, 'validation_failed', name);
    t.equal(e.status, 400);
    t.match(e.request_id, /^req_/);
    t.ok(params.includes(e.param), `${name}: param ${e.param}`);
    t.same([...new Set(e.details.errors.map((x: any) => x.param))].sort(), [...params].sort(), name);
    for (const x of e.details.errors) t.type(x.message, 'string');
  }
  t.same(await counts(app), before, 'nothing written');
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 5);
});

t.test('malformed bodies are 400 invalid_request and write nothing', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const before = await counts(app);
  for (const url of ['/v1/account/keys', '/v1/account/topup', '/v1/account/tier/upgrade']) {
    const res = await app.inject({
      method: 'POST',
      url,
      headers: { ...a.auth, 'content-type': 'application/json' },
      payload: '{"amount_usd": 20,',
    });
    t.equal(res.statusCode, 400, url);
    t.equal(res.json().error.code, 'invalid_request');
    const xml = await app.inject({
      method: 'POST',
      url,
      headers: { ...a.auth, 'content-type': 'application/xml' },
      payload: '<amount_usd>20</amount_usd>',
    });
    t.equal(xml.statusCode, 415, url);
    t.equal(xml.json().error.code, 'unsupported_media_type');
    // Bodies are JSON only: the gateway removes Fastify's text/plain parser.
    const text = await app.inject({
      method: 'POST',
      url,
      headers: { ...a.auth, 'content-type': 'text/plain' },
      payload: 'amount_usd=20',
    });
    t.equal(text.statusCode, 415, url);
    t.equal(text.json().error.code, 'unsupported_media_type');
  }
  t.same(await counts(app), before);
});
