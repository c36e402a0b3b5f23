import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SvcClient, type CreatedKeyResponse } from '../../client/index.js';
import { loadConfig } from '../../config/load.js';
import { buildApp } from '../../core/app.js';
import { freshDatabaseUrl } from '../helpers/app.js';
import type { Tap } from '../helpers/tap.js';
import { rejects } from './client-app.js';

// database-independent: the client's wire; the account, key and top-up rows are plugins/account's, on both.

/**
 * A gateway listening on a free loopback port. It has one extra route that makes a real
 * metered router call (the embedded sandbox-payments checkout), so the cost headers can be
 * read the way any metered area sends them.
 */
async function listening(
  t: Tap,
  overrides: Record<string, unknown> = {}
): Promise<{ app: FastifyInstance; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-client-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = loadConfig({
    object: {
      data_dir: dir,
      database: { url: await freshDatabaseUrl(t, dir) },
      log: { level: 'silent' },
      tiers: { free: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 0 } },
      limits: { activate_per_hour: 1000 },
      ...overrides,
    },
    env: {},
  });
  const app = await buildApp(config);
  t.teardown(() => app.close());
  app.post('/v1/test/metered', { config: { scope: 'account' } }, async (req) => {
    const r = await app.svc.router.call(
      'payments.checkout',
      { topup_id: 'top_x', amount_usd: 5, currency: 'USD', description: 'test' },
      { accountId: req.principal!.accountId, meter: req.meter }
    );
    return { vendor: r.vendor };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

t.test('activate, balance and account against a listening gateway', async (t) => {
  const { url } = await listening(t);
  const c = new SvcClient({ baseUrl: `${url}/v1/` });
  t.equal(c.baseUrl, url, 'a trailing /v1/ is tolerated');
  const a = await c.activate({ region: 'western' });
  t.match(a, { account_id: /^acct_/, project_id: /^proj_/, primary_api_key: /^sk_live_/, trial_credit_usd: 5 });
  t.equal(c.apiKey, a.primary_api_key, 'a client without a key adopts the new one');
  t.match(c.lastRequestId, /^req_/);

  t.same(await c.balance(), { balance_usd: 5, currency: 'USD' });
  const acct = await c.account();
  t.match(acct, {
    account_id: a.account_id,
    kind: 'anonymous',
    status: 'active',
    tier: 'free',
    balance_usd: 5,
    region: 'western',
    project_id: a.project_id,
  });

  // Activating again with the key returns the same account, no second credit.
  const again = await c.activate();
  t.equal(again.account_id, a.account_id);
  t.equal((await c.balance()).balance_usd, 5);
});

t.test('keys: create, paginate, rotate, revoke, idempotency', async (t) => {
  const { url } = await listening(t);
  const c = new SvcClient({ baseUrl: url });
  const a = await c.activate();
  const made: CreatedKeyResponse[] = [];
  for (const label of ['one', 'two', 'three']) made.push(await c.createKey({ label, scopes: ['account:read'] }));
  t.match(made[0], { key_id: /^key_/, label: 'one', scopes: ['account:read'], secret: /^sk_live_/ });

  const first = await c.listKeys({ limit: 2 });
  t.equal(first.items.length, 2);
  t.type(first.next_cursor, 'string');
  const all = [];
  for await (const k of c.iterateKeys({ limit: 2 })) all.push(k);
  t.same(
    all.map((k) => k.label),
    ['three', 'two', 'one', 'primary'],
    'every key once, newest first, across pages'
  );
  t.notOk(
    all.some((k) => 'secret' in k),
    'lists never carry secrets'
  );

  // A read-only key can list but not create.
  const ro = new SvcClient({ baseUrl: url, apiKey: made[0].secret });
  t.equal((await ro.listKeys()).items.length, 4);
  await rejects(t, ro.createKey({ label: 'x' }), { code: 'forbidden', status: 403 }, 'scope is enforced');

  // The idempotency-key header: the same request once, a different body a 409.
  const k1 = await c.createKey({ label: 'idem' }, { idempotencyKey: 'idem-1' });
  const k2 = await c.createKey({ label: 'idem' }, { idempotencyKey: 'idem-1' });
  t.equal(k2.key_id, k1.key_id, 'the retry returns the stored response');
  await rejects(
    t,
    c.createKey({ label: 'other' }, { idempotencyKey: 'idem-1' }),
    { code: 'idempotency_key_reused', status: 409, param: 'idempotency_key' },
    'same key, new body'
  );

  const rotated = await c.rotateKey(made[1].key_id);
  t.match(rotated, { key_id: /^key_/, secret: /^sk_live_/, old_key_id: made[1].key_id, label: 'two' });
  t.not(rotated.key_id, made[1].key_id);
  t.equal(
    (await new SvcClient({ baseUrl: url, apiKey: rotated.secret }).balance()).balance_usd,
    5,
    'the new secret works'
  );
  t.equal(
    (await new SvcClient({ baseUrl: url, apiKey: made[1].secret }).balance()).balance_usd,
    5,
    'the old one still works in its grace period'
  );

  t.same(await c.revokeKey(made[2].key_id), { ok: true });
  const gone = await rejects(
    t,
    new SvcClient({ baseUrl: url, apiKey: made[2].secret }).balance(),
    { code: 'unauthenticated', status: 401 },
    'a revoked key is refused'
  );
  t.match(gone.requestId, /^req_/);
  t.notOk((await c.listKeys({ limit: 200 })).items.some((k) => k.key_id === made[2].key_id));
  t.ok(a.primary_api_key);
});

t.test('errors carry code, status, message, request id, param and details', async (t) => {
  const { url } = await listening(t);
  const c = new SvcClient({ baseUrl: url });
  await c.activate();
  const v = await rejects(
    t,
    c.createKey({ label: '' }),
    { code: 'validation_failed', status: 400, param: 'label' },
    'validation'
  );
  t.ok(Array.isArray(v.details.errors) && (v.details.errors as unknown[]).length >= 1, 'details list the bad fields');
  t.match(v.message, /label/);
  t.match(v.requestId, /^req_/);
  await rejects(t, c.revokeKey('key_doesnotexist'), { code: 'not_found', status: 404, param: 'key_id' }, 'unknown key');
  await rejects(t, c.revokeKey('../../activate'), { code: 'not_found', status: 404 }, 'path segments are encoded');
  await rejects(t, new SvcClient({ baseUrl: url }).balance(), { code: 'unauthenticated', status: 401 }, 'no key');
  await rejects(
    t,
    c.listKeys({ limit: 500 }),
    { code: 'validation_failed', status: 400, param: 'limit' },
    'query validation'
  );

  // A closed port: no response at all.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  await rejects(
    t,
    new SvcClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'sk_live_x' }).balance(),
    { code: 'network_error', status: 0 },
    'connection refused'
  );
});

t.test('lastCost reads the x-svc-* headers of a metered call', async (t) => {
  const { url } = await listening(t);
  const c = new SvcClient({ baseUrl: url });
  await c.activate();
  t.equal(c.lastCost, undefined, 'activation is not metered');
  const r = await c.request<{ vendor: string }>('POST', '/v1/test/metered', { body: {} });
  t.equal(r.vendor, 'sandbox-payments');
  t.match(c.lastCost, { cost_usd: 0, balance_usd: 5, vendor: 'sandbox-payments' });
  t.type(c.lastCost?.latency_ms, 'number');
  await c.balance();
  t.equal(c.lastCost, undefined, 'an unmetered call clears it');
});

/** A loopback server that records each request and answers with the next canned response. */
async function recorder(
  t: Tap,
  answer: (req: IncomingMessage, body: string) => { status: number; body: unknown; headers?: Record<string, string> }
) {
  const seen: Array<{ method?: string; url?: string; headers: IncomingMessage['headers']; body: string }> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      const a = answer(req, body);
      res.writeHead(a.status, {
        'content-type': typeof a.body === 'string' ? 'text/html' : 'application/json',
        ...a.headers,
      });
      res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise((r) => server.close(r)));
  return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

t.test('topup, upgradeTier and usage speak the wire the spec gives', async (t) => {
  const topup = {
    topup_id: 'top_1',
    amount_usd: 25,
    state: 'pending',
    next_action_url: 'http://127.0.0.1/checkout/x',
    checkout_url: 'http://127.0.0.1/checkout/x',
  };
  const summary = { account_id: 'acct_1', kind: 'anonymous', status: 'active', tier: 'pro', balance_usd: 5 };
  const { seen, url } = await recorder(t, (req) => {
    if (req.url === '/v1/account/topup')
      return {
        status: 200,
        body: topup,
        headers: { 'x-svc-cost-usd': '0.000000', 'x-svc-balance-usd': '5.000000', 'x-request-id': 'req_abc' },
      };
    if (req.url === '/v1/account/tier/upgrade') return { status: 200, body: summary };
    if (req.url?.startsWith('/v1/account/usage'))
      return { status: 200, body: { items: [{ day: '2026-11-01', cost_usd: 0.5 }] } };
    return { status: 502, body: '<html><body>Bad gateway</body></html>' };
  });
  const c = new SvcClient({ baseUrl: url, apiKey: 'sk_live_test' });
  const r = await c.topup({ amount_usd: 25, return_url: 'https://example.com/back' }, { idempotencyKey: 'top-1' });
  t.same(r, topup);
  t.equal(r.state, 'pending');
  t.match(c.lastCost, { cost_usd: 0, balance_usd: 5 });
  t.equal(c.lastRequestId, 'req_abc');
  t.match(seen[0], {
    method: 'POST',
    url: '/v1/account/topup',
    headers: { authorization: 'Bearer sk_live_test', 'idempotency-key': 'top-1', 'content-type': 'application/json' },
  });
  t.same(JSON.parse(seen[0].body), { amount_usd: 25, return_url: 'https://example.com/back' });

  t.same(await c.upgradeTier({ target_tier: 'pro' }), summary);
  t.match(seen[1], { method: 'POST', url: '/v1/account/tier/upgrade' });
  t.same(JSON.parse(seen[1].body), { target_tier: 'pro' });
  t.notOk('idempotency-key' in seen[1].headers, 'no idempotency header unless asked');

  t.same((await c.usage({ from: '2026-11-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z', group_by: 'day' })).items, [
    { day: '2026-11-01', cost_usd: 0.5 },
  ]);
  const u = new URL(seen[2].url!, url);
  t.equal(u.pathname, '/v1/account/usage');
  t.same(Object.fromEntries(u.searchParams), {
    from: '2026-11-01T00:00:00.000Z',
    to: '2026-12-01T00:00:00.000Z',
    group_by: 'day',
  });
  t.equal(seen[2].body, '', 'a GET has no body');

  // Something in front of the gateway answering HTML: still a SvcError, with the status.
  const e = await rejects(t, c.request('GET', '/v1/elsewhere'), { code: 'http_error', status: 502 }, 'non-JSON error');
  t.match(e.message, /502.*Bad gateway/);
});

t.test("the client takes a fetch of the caller's and a timeout", async (t) => {
  const { url } = await recorder(t, () => ({ status: 200, body: { balance_usd: 1, currency: 'USD' } }));
  const calls: string[] = [];
  const c = new SvcClient({
    baseUrl: url,
    apiKey: 'sk_live_a',
    fetch: (input, init) => (calls.push(String(input)), fetch(input, init)),
  });
  t.same(await c.balance(), { balance_usd: 1, currency: 'USD' });
  t.same(calls, [`${url}/v1/account/balance`]);

  const slow = createServer(() => {
    /* never answers */
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    slow.closeAllConnections();
    return new Promise((r) => slow.close(r));
  });
  const s = new SvcClient({ baseUrl: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`, timeoutMs: 200 });
  await rejects(t, s.balance(), { code: 'timeout', status: 0 }, 'no answer in time');
  const ac = new AbortController();
  const p = s.balance({ signal: ac.signal });
  ac.abort();
  await rejects(t, p, { code: 'aborted', status: 0 }, 'the caller aborts');
  t.throws(() => new SvcClient({ baseUrl: '' }), TypeError);
});
