import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { activate, makeApp, type Activated } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import { FAST, receiver, verify } from './receiver.js';

// The gateway's event endpoints (/v1/events/endpoints) and the deliveries svc.events.emit makes.

const TYPES = { 'probe.ping': 'A test event.', 'probe.pong': 'Another test event.' };

async function eventsApp(t: any, overrides: Record<string, any> = {}) {
  const { app } = await makeApp(t, { ...FAST, ...overrides });
  app.svc.events.declare(TYPES);
  return { app, a: await activate(app), b: await activate(app) };
}

const create = (app: FastifyInstance, who: Activated, payload: Record<string, unknown>, headers = {}) =>
  app.inject({ method: 'POST', url: '/v1/events/endpoints', headers: { ...who.auth, ...headers }, payload });

const emit = (app: FastifyInstance, accountId: string, type: string, data: Record<string, unknown>) =>
  app.svc.db.transaction().execute((trx) => app.svc.events.emit(trx, { accountId, type, data }));

const deliveries = async (app: FastifyInstance) =>
  app.svc.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', 'is not', null).execute();

t.test('create shows the secret once; get, list and delete; another account sees none of it', async (t) => {
  const { app, a, b } = await eventsApp(t);
  const one = await create(app, a, { url: 'https://example.com/one', description: 'first' });
  t.equal(one.statusCode, 200, one.body);
  t.match(one.json(), { endpoint_id: /^ep_/, url: 'https://example.com/one', event_types: null, secret: /^whsec_/ });
  const two = await create(app, a, { url: 'https://example.com/two', event_types: ['probe.pong'] });
  const id = one.json().endpoint_id;
  const got = await app.inject({ method: 'GET', url: `/v1/events/endpoints/${id}`, headers: a.auth });
  t.equal(got.statusCode, 200);
  t.notOk('secret' in got.json(), 'the secret is not shown again');
  t.equal(got.json().description, 'first');
  const page1 = (await app.inject({ method: 'GET', url: '/v1/events/endpoints?limit=1', headers: a.auth })).json();
  t.same(
    page1.items.map((e: any) => e.endpoint_id),
    [two.json().endpoint_id]
  );
  const page2 = (
    await app.inject({
      method: 'GET',
      url: `/v1/events/endpoints?limit=1&cursor=${page1.next_cursor}`,
      headers: a.auth,
    })
  ).json();
  t.same(
    page2.items.map((e: any) => e.endpoint_id),
    [id]
  );
  t.equal(page2.next_cursor, null);

  for (const method of ['GET', 'DELETE'] as const) {
    const r = await app.inject({ method, url: `/v1/events/endpoints/${id}`, headers: b.auth });
    t.equal(r.statusCode, 404, `${method} of another account's endpoint`);
  }
  t.same((await app.inject({ method: 'GET', url: '/v1/events/endpoints', headers: b.auth })).json().items, []);

  const del = await app.inject({ method: 'DELETE', url: `/v1/events/endpoints/${id}`, headers: a.auth });
  t.same(del.json(), { ok: true });
  t.equal((await app.inject({ method: 'GET', url: `/v1/events/endpoints/${id}`, headers: a.auth })).statusCode, 404);
  const types = (await app.inject({ method: 'GET', url: '/v1/events/types', headers: a.auth })).json();
  const names: string[] = types.items.map((x: any) => x.type);
  // The test area's types among every area's (email.*, sms.*…), sorted.
  t.same(
    names.filter((n) => n.startsWith('probe.')),
    ['probe.ping', 'probe.pong']
  );
  t.same(names, [...names].sort());
});

t.test('bad input writes nothing', async (t) => {
  const { app, a } = await eventsApp(t, {
    plugins: { scheduling: { ...FAST.plugins.scheduling, max_event_endpoints: 1 } },
  });
  const unknownType = await create(app, a, { url: 'https://example.com/x', event_types: ['probe.nope'] });
  t.equal(unknownType.statusCode, 400);
  t.equal(unknownType.json().error.param, 'event_types[0]');
  t.equal((await create(app, a, { url: 'ftp://example.com/x' })).statusCode, 400);
  t.equal((await create(app, a, { url: 'https://example.com/x', extra: 1 })).statusCode, 400);
  t.equal((await create(app, a, { url: 'https://example.com/x', event_types: [] })).statusCode, 400);
  t.same((await app.inject({ method: 'GET', url: '/v1/events/endpoints', headers: a.auth })).json().items, []);
  t.equal((await create(app, a, { url: 'https://example.com/x' })).statusCode, 200);
  const over = await create(app, a, { url: 'https://example.com/y' });
  t.equal(over.statusCode, 413, 'over max_event_endpoints');
});

t.test('scopes: events:read lists, only events creates and deletes', async (t) => {
  const { app, a } = await eventsApp(t);
  const key = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: a.auth,
    payload: { label: 'reader', scopes: ['events:read'] },
  });
  t.equal(key.statusCode, 200, key.body);
  const reader = { ...a, auth: { authorization: `Bearer ${key.json().secret}` } };
  t.equal((await app.inject({ method: 'GET', url: '/v1/events/endpoints', headers: reader.auth })).statusCode, 200);
  t.equal((await create(app, reader, { url: 'https://example.com/x' })).statusCode, 403);
  const id = (await create(app, a, { url: 'https://example.com/x' })).json().endpoint_id;
  const del = await app.inject({ method: 'DELETE', url: `/v1/events/endpoints/${id}`, headers: reader.auth });
  t.equal(del.statusCode, 403);
});

t.test('emit: one signed delivery per matching endpoint of the account, only if the transaction commits', async (t) => {
  const { app, a, b } = await eventsApp(t);
  const all = await receiver(t);
  const pongs = await receiver(t);
  const other = await receiver(t);
  const allSecret = (await create(app, a, { url: all.url })).json().secret;
  await create(app, a, { url: pongs.url, event_types: ['probe.pong'] });
  await create(app, b, { url: other.url });
  await t.rejects(
    app.svc.db.transaction().execute(async (trx) => {
      await app.svc.events.emit(trx, { accountId: a.account_id, type: 'probe.ping', data: { n: 0 } });
      throw new Error('rolled back');
    })
  );
  t.equal((await deliveries(app)).length, 0, 'a rolled-back emit leaves nothing');
  await emit(app, a.account_id, 'probe.ping', { n: 1 });
  await all.waitFor(1);
  const body = verify(allSecret, all.hits[0]) as any;
  t.same(body.data, { n: 1 });
  t.equal(body.type, 'probe.ping');
  t.equal(all.hits[0].headers['webhook-event-type'], 'probe.ping');
  const rows = await deliveries(app);
  t.equal(rows.length, 1, 'no delivery for the filtered endpoint nor the other account');
  t.equal(all.hits[0].headers['webhook-id'], rows[0].delivery_id);
  t.equal(pongs.hits.length + other.hits.length, 0);
  await t.rejects(emit(app, a.account_id, 'probe.undeclared', {}), /never declared/);
});

t.test('a retried event keeps its webhook-id; a deleted endpoint gets no more attempts', async (t) => {
  const { app, a } = await eventsApp(t);
  let endpointId = '';
  const rx = await receiver(t, async (hit) => {
    if (hit.n === 1) return { status: 503 };
    if (hit.n === 2) {
      await app.inject({ method: 'DELETE', url: `/v1/events/endpoints/${endpointId}`, headers: a.auth });
      return { status: 503 };
    }
    return { status: 200 };
  });
  endpointId = (await create(app, a, { url: rx.url })).json().endpoint_id;
  await emit(app, a.account_id, 'probe.ping', {});
  await until('the delivery to fail', async () => (await deliveries(app))[0]?.state === 'failed');
  t.equal(rx.hits.length, 2);
  t.equal(rx.hits[0].headers['webhook-id'], rx.hits[1].headers['webhook-id']);
});

t.test('with the scheduling area off: no endpoint routes, and emit records nothing', async (t) => {
  const { app } = await makeApp(t, { plugins: { scheduling: false } });
  app.svc.events.declare(TYPES);
  const a = await activate(app);
  t.equal(app.svc.events.delivering, false);
  t.equal((await create(app, a, { url: 'https://example.com/x' })).statusCode, 404);
  await emit(app, a.account_id, 'probe.ping', {});
  t.pass('emit is a no-op');
});
