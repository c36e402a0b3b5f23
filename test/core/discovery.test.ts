import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { makeApp, activate } from '../helpers/app.js';
import { ERRORS } from '../../core/errors.js';
import { RouteRegistry } from '../../core/discovery/route-registry.js';
import type { Tap } from '../helpers/tap.js';

// database-independent: the discovery document and its examples; the rows the examples write are their areas'.

const run = promisify(execFile);

// A third-party area, loaded from a file the way an operator's plugin is: one billed,
// idempotent operation on the payments.checkout capability with a body, a query string and
// a path id; one on a capability no vendor serves; one hidden route.
const PROBE_AREA = `
export default {
  kind: 'area', apiVersion: 1, name: 'probe',
  capabilities: { 'probe.none': { idempotent: true } },
  register(app, ctx) {
    app.post('/v1/probe/orders/:order_id/checkout', {
      config: { operation: 'probe.checkout', scope: 'probe', capability: 'payments.checkout', idempotent: true,
        billing: { unit: 'call', price_usd: 0.01, free_quota: 100 }, errors: ['conflict'] },
      schema: {
        summary: 'Check out an order', description: 'A probe of discovery.', tags: ['probe'],
        params: { type: 'object', required: ['order_id'], additionalProperties: false, properties: { order_id: { type: 'string', pattern: '^ord_[0-9A-Za-z]+$' } } },
        querystring: { type: 'object', required: ['mode', 'tags'], additionalProperties: false, properties: {
          mode: { type: 'string', enum: ['fast', 'slow'] }, page: { type: 'integer' }, tags: { type: 'array', minItems: 1, items: { type: 'string', minLength: 2 } } } },
        body: { type: 'object', additionalProperties: false, required: ['amount_usd', 'items', 'when', 'email'], properties: {
          amount_usd: { type: 'number', minimum: 5, maximum: 10000 },
          items: { type: 'array', minItems: 1, items: { type: 'object', additionalProperties: false, required: ['sku', 'qty'], properties: { sku: { type: 'string', minLength: 3 }, qty: { type: 'integer', minimum: 1 } } } },
          when: { type: 'string', format: 'date-time' },
          email: { type: 'string', format: 'email' },
          note: { type: 'string' },
          idempotency_key: { type: 'string' } } },
        response: { 200: { type: 'object', properties: { session_id: { type: 'string' }, order_id: { type: 'string' }, mode: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } } } },
      },
    }, async (req) => {
      const r = await ctx.svc.router.call('payments.checkout', { topup_id: req.params.order_id, amount_usd: req.body.amount_usd, currency: 'USD', description: 'probe' },
        { accountId: req.principal.accountId, meter: req.meter });
      return { session_id: r.output.session_id, order_id: req.params.order_id, mode: req.query.mode, tags: req.query.tags };
    });
    app.get('/v1/probe/nothing', { config: { operation: 'probe.nothing', capability: 'probe.none' }, schema: { tags: ['probe'] } }, async () => ({}));
    app.get('/v1/admin/probe', { config: { auth: 'admin', operation: 'probe.admin' }, schema: { tags: ['probe'] } }, async () => ({ ok: true }));
    app.get('/v1/probe/hidden', { config: { operation: 'probe.hidden' }, schema: { hide: true } }, async () => ({}));
  },
};
`;

async function probeApp(t: Tap, overrides: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-probe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'probe-area.mjs'), PROBE_AREA);
  return makeApp(t, { plugins: { './probe-area.mjs': {} }, ...overrides }, { baseDir: dir });
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

t.test('GET /v1/discovery lists every operation with its availability, vendors and price', async (t) => {
  const { app } = await probeApp(t, { admin_key: 'admin_secret_for_tests' });
  const res = await app.inject({ method: 'GET', url: '/v1/discovery' });
  t.equal(res.statusCode, 200, 'no key needed');
  const items: any[] = res.json().items;
  const byId = new Map(items.map((i) => [i.id, i]));
  t.equal(byId.size, items.length, 'ids are unique');
  for (const id of [
    'account.activate',
    'account.keys.list',
    'account.keys.create',
    'account.keys.revoke',
    'account.keys.rotate',
    'account.get',
    'account.balance',
    'system.version',
    'system.discovery',
    'system.discovery.get',
    'system.openapi',
    'probe.checkout',
    'probe.nothing',
    'probe.admin',
  ])
    t.ok(byId.has(id), `${id} is listed`);
  t.notOk(byId.has('probe.hidden'), 'hidden routes stay out');

  t.match(byId.get('account.keys.revoke'), {
    id: 'account.keys.revoke',
    method: 'DELETE',
    path: '/v1/account/keys/{key_id}',
    summary: String,
    capability: null,
    available: true,
    regions: [],
    vendors: [],
    billing: null,
  });
  t.same(byId.get('probe.checkout'), {
    id: 'probe.checkout',
    method: 'POST',
    path: '/v1/probe/orders/{order_id}/checkout',
    summary: 'Check out an order',
    capability: 'payments.checkout',
    available: true,
    regions: ['global'],
    vendors: ['sandbox-payments'],
    billing: { unit: 'call', price_usd: 0.01, free_quota: 100 },
  });
  t.match(
    byId.get('probe.nothing'),
    { capability: 'probe.none', available: false, vendors: [], regions: [] },
    'no vendor serves it'
  );
  t.equal(
    byId.get('probe.nothing').reason,
    'No vendor is configured for probe.none. Add one under `vendors:` in the config file (see docs/configuration.md).',
    'an unavailable operation says why, in the words of its 503'
  );
  t.match(byId.get('ai.chat'), {
    available: false,
    reason: /^No vendor is configured for ai\.chat\. .*register your own key with POST \/v1\/byok\.$/,
  });
  t.notOk('reason' in byId.get('probe.checkout'), 'no reason while available');
  const a = await activate(app);
  const refused = await app.svc.router.call('probe.none', {}, { accountId: a.account_id }).catch((e) => e);
  t.match(
    refused,
    { code: 'no_vendor_available', message: byId.get('probe.nothing').reason },
    "the reason is the router's 503 message"
  );

  // The same registry as the OpenAPI document: one id per operationId, nothing more or less.
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  const opIds = Object.values<Record<string, any>>(doc.paths)
    .flatMap((ops) => Object.values<any>(ops).map((o) => o.operationId))
    .filter(Boolean);
  t.same([...byId.keys()].sort(), opIds.sort());
  t.same(doc.paths['/v1/probe/orders/{order_id}/checkout'].post['x-svc-billing'], {
    unit: 'call',
    price_usd: 0.01,
    free_quota: 100,
  });
});

t.test('availability follows the router: a vendor in cooldown makes its operations unavailable', async (t) => {
  const { app } = await probeApp(t);
  const checkout = async () =>
    (await app.inject({ method: 'GET', url: '/v1/discovery' }))
      .json()
      .items.find((i: any) => i.id === 'probe.checkout');
  t.equal((await checkout()).available, true);
  app.svc.router.cooldowns.failure('sandbox-payments', 'unavailable');
  t.equal((await checkout()).available, false, 'cooling down');
  t.match(
    (await checkout()).reason,
    /^Every vendor configured for payments\.checkout \(sandbox-payments\) is cooling down after failures/
  );
  t.same((await checkout()).vendors, ['sandbox-payments'], 'still configured');
  app.svc.router.cooldowns.success('sandbox-payments');
  t.equal((await checkout()).available, true, 'healthy again');
});

t.test('GET /v1/discovery/{id} adds the request schemas, the errors and an example', async (t) => {
  const { app } = await probeApp(t, { admin_key: 'admin_secret_for_tests' });
  const res = await app.inject({ method: 'GET', url: '/v1/discovery/probe.checkout' });
  t.equal(res.statusCode, 200);
  const d = res.json();
  t.match(d, {
    id: 'probe.checkout',
    auth: 'key',
    scope: 'probe',
    idempotent: true,
    description: 'A probe of discovery.',
    available: true,
  });
  t.same(d.request.params.required, ['order_id']);
  t.same(d.request.querystring.properties.mode.enum, ['fast', 'slow']);
  t.same(d.request.body.required, ['amount_usd', 'items', 'when', 'email']);
  t.same(Object.keys(d.response.properties), ['session_id', 'order_id', 'mode', 'tags']);
  t.same(
    d.errors.map((e: any) => e.code),
    [
      'invalid_request',
      'validation_failed',
      'unauthenticated',
      'insufficient_balance',
      'forbidden',
      'not_found',
      'conflict',
      'idempotency_key_reused',
      'idempotency_in_progress',
      'payload_too_large',
      'unsupported_media_type',
      'rate_limited',
      'vendor_error',
      'no_vendor_available',
      'vendor_timeout',
    ]
  );
  for (const e of d.errors)
    t.same(e, { code: e.code, ...ERRORS[e.code as keyof typeof ERRORS] }, `${e.code} as core/errors.ts says`);
  t.same(d.example.body, {
    amount_usd: 5,
    items: [{ sku: 'sku', qty: 1 }],
    when: '2026-01-01T00:00:00.000Z',
    email: 'user@example.com',
  });
  t.match(
    d.example.curl,
    /^curl -sS -X POST 'http:\/\/127\.0\.0\.1:8787\/v1\/probe\/orders\/ord_example\/checkout\?mode=fast&tags=tag'/
  );
  t.match(d.example.curl, /-H "Authorization: Bearer \$SVC_API_KEY"/);

  const free = (await app.inject({ method: 'GET', url: '/v1/discovery/system.discovery.get' })).json();
  t.same(
    free.errors.map((e: any) => e.code),
    ['validation_failed', 'not_found'],
    'no key, no auth errors; no body, no body errors'
  );
  t.equal(free.auth, 'none');
  t.equal(free.scope, null);
  t.notMatch(free.example.curl, /Authorization/);
  t.same(
    (await app.inject({ method: 'GET', url: '/v1/discovery/account.balance' })).json().request,
    {},
    'nothing to send'
  );
  const admin = (await app.inject({ method: 'GET', url: '/v1/discovery/probe.admin' })).json();
  t.match(admin, { auth: 'admin', scope: null });
  t.same(
    admin.errors.map((e: any) => e.code),
    ['validation_failed', 'unauthenticated']
  );
  t.match(admin.example.curl, /-H "Authorization: Bearer \$SVC_ADMIN_KEY"/);
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  t.same(doc.paths['/v1/admin/probe'].get.security, [{ adminKey: [] }]);
  t.same(doc.paths['/v1/probe/orders/{order_id}/checkout'].post.security, [{ bearerAuth: [] }, { apiKeyHeader: [] }]);

  const unknown = await app.inject({ method: 'GET', url: '/v1/discovery/nope.nothing' });
  t.equal(unknown.statusCode, 404);
  t.match(unknown.json().error, { code: 'not_found', status: 404, param: 'id' });
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/discovery/probe.hidden' })).statusCode,
    404,
    'hidden operations are not described'
  );
  const bad = await app.inject({ method: 'GET', url: '/v1/discovery/NOT%20AN%20ID' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.code, 'validation_failed');
});

t.test('every example runs with curl against a listening gateway', async (t) => {
  const port = await freePort();
  const { app } = await probeApp(t, {
    server: { public_url: `http://127.0.0.1:${port}` },
    admin_key: 'admin_secret_for_tests',
  });
  await app.listen({ port, host: '127.0.0.1' });
  const a = await activate(app);
  const items: any[] = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json().items;
  const ran = new Map<string, { status: number; body: any }>();
  for (const { id } of items) {
    const { curl } = (await app.inject({ method: 'GET', url: `/v1/discovery/${id}` })).json().example;
    const { stdout } = await run('/bin/sh', ['-c', `${curl} -w '\\n%{http_code}'`], {
      env: { ...process.env, SVC_API_KEY: a.key, SVC_ADMIN_KEY: 'admin_secret_for_tests' },
    });
    const nl = stdout.lastIndexOf('\n');
    const status = Number(stdout.slice(nl + 1));
    // A text answer (the Prometheus scrape) is checked for its status only.
    const text = stdout.slice(0, nl);
    const body = /^\s*[[{]/.test(text) ? JSON.parse(text) : {};
    ran.set(id, { status, body });
    t.not(body.error?.code, 'validation_failed', `${id}: the example passes validation`);
    t.notMatch(body.error?.message ?? '', /No route/, `${id}: the example reaches the route`);
    t.not(status, 401, `${id}: the example authenticates`);
  }
  t.equal(ran.get('probe.checkout')?.status, 200);
  t.match(ran.get('probe.checkout')?.body, {
    session_id: /^cs_sandbox_/,
    order_id: 'ord_example',
    mode: 'fast',
    tags: ['tag'],
  });
  t.equal(ran.get('account.keys.create')?.status, 200);
  t.match(ran.get('account.keys.create')?.body.secret, /^sk_live_/);
  t.equal(ran.get('account.keys.revoke')?.body.error?.code, 'not_found', 'a made-up id is an honest 404');
  t.equal(ran.get('system.version')?.status, 200);
  t.equal(ran.get('probe.nothing')?.status, 200, 'no vendor needed to answer it');
  t.same(ran.get('probe.admin'), { status: 200, body: { ok: true } }, 'admin examples carry the admin key');
});

t.test("the example body of a list of objects is a list of objects: ai.chat's messages", async (t) => {
  const { app } = await probeApp(t);
  const d = (await app.inject({ method: 'GET', url: '/v1/discovery/ai.chat' })).json();
  t.match(d.example.body, { messages: [{ role: String, content: String }] }, JSON.stringify(d.example.body));
});

t.test('an operation id declared twice fails at boot', async (t) => {
  const registry = new RouteRegistry();
  registry.add({ method: 'GET', url: '/v1/a', config: { operation: 'x.get' } as any });
  t.throws(
    () => registry.add({ method: 'POST', url: '/v1/b', config: { operation: 'x.get' } as any }),
    /Operation id "x.get" is declared by GET \/v1\/a and POST \/v1\/b/
  );
  registry.add({ method: ['GET', 'HEAD'], url: '/v1/c/:id', config: { operation: 'x.c' } as any });
  t.same(
    registry.operations().map((r) => [r.method, r.path, r.auth]),
    [
      ['GET', '/v1/a', 'key'],
      ['GET', '/v1/c/{id}', 'key'],
    ],
    'HEAD twins are skipped'
  );
});

t.test("with no admin key an area's admin route is in neither discovery nor OpenAPI (it answers 404)", async (t) => {
  const { app } = await probeApp(t);
  const ids = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json().items.map((i: any) => i.id);
  t.ok(ids.includes('probe.checkout'));
  t.notOk(ids.includes('probe.admin'));
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  t.notOk(doc.paths['/v1/admin/probe']);
  t.notOk(doc.components.securitySchemes.adminKey);
  t.equal((await app.inject({ method: 'GET', url: '/v1/admin/probe' })).statusCode, 404);
});
