import t from 'tap';
import { gzipSync } from 'node:zlib';
import { NodeClient, Scope, defaultStackParser, makeNodeTransport } from '@sentry/node';
import { activate, type Activated } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import type { Tap } from '../../helpers/tap.js';
import { get, rowCount } from './obs-app.js';

// @sentry/node pointed at the account's DSN delivers errors into the same issues as the JSON
// API; over the tier's rate it gets 429 + Retry-After and stops sending; what is not a valid
// envelope is refused whole.

async function sentryFor(t: Tap, dsn: string) {
  const client = new NodeClient({
    dsn,
    transport: makeNodeTransport,
    stackParser: defaultStackParser,
    integrations: [],
    sendClientReports: false,
  });
  const scope = new Scope();
  scope.setClient(client);
  client.init();
  t.teardown(() => client.close(2000));
  return { client, scope };
}

async function dsnOf(app: any, who: Activated) {
  const res = await get(app, who, '/v1/observability/sentry-dsn');
  t.equal(res.statusCode, 200);
  return res.json();
}

t.test('@sentry/node: same line twice and another line once make two issues, counts 2 and 1', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const d = await dsnOf(app, a);
  t.match(d, { dsn: /^http:\/\/[0-9a-f]{32}@127\.0\.0\.1:\d+\/\d+$/, project_id: /^\d+$/ });
  t.notMatch(d.dsn, a.key, 'the DSN never carries the project key');
  t.same(await dsnOf(app, a), d, 'one DSN an account');

  const { client, scope } = await sentryFor(t, d.dsn);
  const statuses: (number | undefined)[] = [];
  client.on('afterSendEvent', (_e, r) => statuses.push(r?.statusCode));
  for (let i = 0; i < 2; i++) scope.captureException(new TypeError(`same line ${i}`));
  scope.captureException(new RangeError('another line'));
  t.ok(await client.flush(5000));
  t.same(statuses, [200, 200, 200]);

  const issues = (await get(app, a, '/v1/observability/issues')).json().items;
  t.same(
    issues.map((i: any) => [i.type, i.count]),
    [
      ['RangeError', 1],
      ['TypeError', 2],
    ]
  );
  t.match(issues[1].culprit, /sentry\.test\.ts:\d+\)$/);
  const events = (await get(app, a, `/v1/observability/issues/${issues[1].issue_id}/events`)).json().items;
  // The SDK sends the two events side by side: they may arrive, and list, in either order.
  t.same(events.map((e: any) => e.message).sort(), ['same line 0', 'same line 1']);
  t.match(
    events.find((e: any) => e.message === 'same line 1'),
    { source: 'sentry', stack: /^TypeError: same line 1\n {4}at / }
  );

  t.test('the same error through the JSON API lands in the same issue', async (t) => {
    const ev = events[0];
    const res = await app.inject({
      method: 'POST',
      url: '/v1/observability/errors',
      headers: a.auth,
      payload: { message: 'same line 2', stack: ev.stack },
    });
    t.equal(res.json().issue_id, issues[1].issue_id);
  });
});

t.test('over the tier: 429 with Retry-After, and the SDK backs off', async (t) => {
  const { app } = await listeningApp(t, { tiers: { free: { rate_per_minute: 1, burst: 2 } } });
  const a = await activate(app);
  const d = await dsnOf(app, a);
  let posted = 0;
  app.server.on('request', (req) => {
    if (req.method === 'POST' && req.url?.startsWith('/api/')) posted++;
  });
  const { client, scope } = await sentryFor(t, d.dsn);
  const statuses: (number | undefined)[] = [];
  client.on('afterSendEvent', (_e, r) => statuses.push(r?.statusCode));
  for (let i = 0; i < 5; i++) {
    scope.captureException(new Error(`burst ${i}`));
    await client.flush(5000);
  }
  t.same(statuses.slice(0, 3), [200, 200, 429], 'the burst, then 429');
  t.equal(posted, 3, 'after the 429 the SDK sends nothing until Retry-After has passed');
  const res = await app.inject({
    method: 'POST',
    url: `/api/${d.project_id}/envelope/?sentry_key=${d.public_key}`,
    payload: '{}\n',
  });
  t.equal(res.statusCode, 429);
  t.ok(Number(res.headers['retry-after']) > 0);
  t.equal((await get(app, a, '/v1/observability/issues')).json().items[0].count, 2);
});

t.test('the envelope endpoint', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const d = await dsnOf(app, a);
  const url = `/api/${d.project_id}/envelope/`;
  const event = (msg: string) => JSON.stringify({ event_id: 'a'.repeat(32), message: msg, level: 'error' });
  const envelope = (...items: [string, string][]) =>
    [JSON.stringify({ event_id: 'a'.repeat(32), dsn: d.dsn }), ...items.flat()].join('\n');
  const send = (body: string | Buffer, headers: Record<string, string> = {}, key = d.public_key) =>
    app.inject({ method: 'POST', url: `${url}?sentry_key=${key}&sentry_version=7`, headers, payload: body });

  t.test('gzip, X-Sentry-Auth, length-framed items, other item types ignored', async (t) => {
    const p = event('Checkout 1234 failed');
    const body = envelope(
      [JSON.stringify({ type: 'session' }), '{"sid":"x"}'],
      [JSON.stringify({ type: 'event', length: Buffer.byteLength(p) }), p],
      [JSON.stringify({ type: 'client_report' }), '{}']
    );
    const res = await app.inject({
      method: 'POST',
      url,
      headers: {
        'content-encoding': 'gzip',
        'content-type': 'application/x-sentry-envelope',
        'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${d.public_key}, sentry_client=test/1`,
      },
      payload: gzipSync(body),
    });
    t.equal(res.statusCode, 200, res.body);
    t.same(res.json(), { id: 'a'.repeat(32) });
    t.equal(res.headers['access-control-allow-origin'], '*');
    const again = await send(envelope([JSON.stringify({ type: 'event' }), event('Checkout 77 failed')]), {
      'content-type': 'text/plain;charset=UTF-8',
    });
    t.equal(again.statusCode, 200);
    const items = (await get(app, a, '/v1/observability/issues')).json().items;
    t.match(items, [{ title: 'Checkout 1234 failed', count: 2 }]);
    t.equal(await rowCount(app, 'obs_errors'), 2, 'the session and the client report are not stored');
  });

  t.test('a browser may post from any origin (preflight)', async (t) => {
    const res = await app.inject({
      method: 'OPTIONS',
      url,
      headers: {
        origin: 'https://shop.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    t.equal(res.statusCode, 204);
    t.equal(res.headers['access-control-allow-origin'], '*');
    t.match(res.headers['access-control-allow-methods'], /POST/);
  });

  t.test('refused: unknown key, another project, the project key, malformed envelopes; nothing stored', async (t) => {
    const before = await rowCount(app, 'obs_errors');
    const ok = envelope([JSON.stringify({ type: 'event' }), event('x')]);
    t.equal((await send(ok, {}, 'f'.repeat(32))).statusCode, 401);
    t.equal((await send(ok, {}, a.key)).statusCode, 401, 'the project key is not a DSN key');
    const theirs = await dsnOf(app, b);
    t.equal((await send(ok, {}, theirs.public_key)).statusCode, 401, "another account's key on this project");
    for (const bad of [
      'not json',
      '[]\n{}',
      `{}\n${JSON.stringify({ type: 'event', length: 999 })}\n{}`,
      `{}\n{"length":2}\n{}`,
      `{}\n${JSON.stringify({ type: 'event' })}\nnot json`,
      `{}\n${JSON.stringify({ type: 'event' })}\n${event('fine')}\n${JSON.stringify({ type: 'event' })}\n[1]`,
    ]) {
      const res = await send(bad);
      t.equal(res.statusCode, 400, bad.slice(0, 40));
      t.equal(res.json().error.code, 'invalid_request');
    }
    t.equal((await send(Buffer.from('not gzip'), { 'content-encoding': 'gzip' })).statusCode, 400);
    t.equal((await send(ok, { 'content-encoding': 'br' })).statusCode, 415);
    t.equal(await rowCount(app, 'obs_errors'), before);
  });
});
