import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { activate, makeApp } from '../../helpers/app.js';
import { thirdPartyProject } from '../../helpers/third-party.js';
import type { Tap } from '../../helpers/tap.js';

// database-independent: a chat vendor from npm; routing and charging are core's tests', on both.

// svc-vendor-acme-chat (test/fixtures/packages): a chat vendor from npm, named in the config by
// its package name, built only on svc-gateway's exports, bringing its own model rows and
// prices. Two instances of it (two Acme accounts) each talk to a fake of Acme's API.

interface AcmeFake {
  url: string;
  /** Answer the next calls with this HTTP status instead. */
  failures: number[];
  requests: Array<{ authorization?: string; body: { model: string; stream: boolean } }>;
}

async function acmeFake(t: Tap, key: string): Promise<AcmeFake> {
  const fake: AcmeFake = { url: '', failures: [], requests: [] };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const c of req) raw += c;
    const body = JSON.parse(raw);
    fake.requests.push({ authorization: req.headers.authorization, body });
    const status = req.headers.authorization !== `Bearer ${key}` ? 401 : fake.failures.shift();
    if (status) return void res.writeHead(status, { 'content-type': 'text/plain' }).end('acme is down');
    const usage = { tokens_in: 10, tokens_out: 3 };
    if (!body.stream) {
      const answer = { text: 'Hello from acme.', stop: 'stop', ...usage };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    for (const text of ['Hello', ' from', ' acme.']) res.write(`${JSON.stringify({ text })}\n`);
    res.end(`${JSON.stringify({ done: true, stop: 'stop', ...usage })}\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

async function acmeApp(t: Tap) {
  const [a, b] = [await acmeFake(t, 'key-a'), await acmeFake(t, 'key-b')];
  const baseDir = await thirdPartyProject(t, ['svc-vendor-acme-chat']);
  const { app } = await makeApp(
    t,
    {
      vendors: [
        { id: 'acme-a', use: 'svc-vendor-acme-chat', config: { base_url: a.url, api_key: 'key-a' } },
        { id: 'acme-b', use: 'svc-vendor-acme-chat', config: { base_url: b.url, api_key: 'key-b' } },
      ],
    },
    { baseDir }
  );
  const who = await activate(app);
  return { app, a, b, who };
}

const chat = (app: FastifyInstance, auth: Record<string, string>, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/ai/chat', headers: auth, payload });

// acme-large: 3 USD per million input tokens, 9 per million output (the package's own rows).
const LARGE_MICROS = 10 * 3 + 3 * 9;
const FAILED_OVER = [
  { vendor: 'acme-a', status: 'unavailable' },
  { vendor: 'acme-b', status: 'ok' },
];

t.test("the router routes by the package's models and charges its prices", async (t) => {
  const { app, a, b, who } = await acmeApp(t);
  const models = (await app.inject({ method: 'GET', url: '/v1/openai/models', headers: who.auth })).json().data;
  t.same(
    models.map((m: { id: string; owned_by: string }) => [m.id, m.owned_by]),
    [
      ['acme-large', 'svc-vendor-acme-chat'],
      ['acme-mini', 'svc-vendor-acme-chat'],
    ],
    'its rows are in the catalog'
  );

  const before = await app.svc.wallet.balance(who.account_id);
  const res = await chat(app, who.auth, { messages: 'hi', model: 'acme-large' });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().content, 'Hello from acme.');
  t.match(res.json().metadata, {
    vendor: 'acme-a',
    model: 'acme-large',
    cost_usd: LARGE_MICROS / 1e6,
    attempts: [{ vendor: 'acme-a', status: 'ok' }],
  });
  t.equal(before - (await app.svc.wallet.balance(who.account_id)), LARGE_MICROS);
  t.match(a.requests, [{ authorization: 'Bearer key-a', body: { model: 'acme-large', stream: false } }]);
  t.equal(b.requests.length, 0);

  const mini = await chat(app, who.auth, { messages: 'hi', model: 'acme-mini' });
  t.match(mini.json().metadata, { model: 'acme-mini', cost_usd: (10 * 0.5 + 3 * 1) / 1e6 });
  const cheapest = await chat(app, who.auth, { messages: 'hi', prefer: 'cheapest' });
  t.equal(cheapest.json().metadata.model, 'acme-mini', "ranked by the package's prices");
  const smartest = await chat(app, who.auth, { messages: 'hi', prefer: 'smartest' });
  t.equal(smartest.json().metadata.model, 'acme-large', 'and by its quality ranks');

  const discovery = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json().items;
  t.same(
    discovery.find((i: { id: string }) => i.id === 'ai.chat').billing,
    { unit: '1m_input_tokens', price_usd: 0.5 },
    "discovery's list price comes from the package's rows"
  );
});

t.test('a failing instance fails over to the next, charged once', async (t) => {
  const { app, a, b, who } = await acmeApp(t);
  a.failures.push(503);
  const before = await app.svc.wallet.balance(who.account_id);
  const res = await chat(app, who.auth, { messages: 'hi', model: 'acme-large' });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json().metadata, { vendor: 'acme-b', attempts: FAILED_OVER });
  t.equal(before - (await app.svc.wallet.balance(who.account_id)), LARGE_MICROS);
  t.match(b.requests, [{ authorization: 'Bearer key-b', body: { model: 'acme-large' } }]);
});

t.test('a stream comes through, from the second instance when the first fails before its first token', async (t) => {
  const { app, a, b, who } = await acmeApp(t);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const stream = async () => {
    const res = await fetch(`${url}/v1/ai/chat`, {
      method: 'POST',
      headers: { ...who.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: 'hi', model: 'acme-large', stream: true }),
    });
    t.match(res.headers.get('content-type'), /^text\/event-stream/);
    const data = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((block) => block.replace(/^data: /, ''));
    t.equal(data.at(-1), '[DONE]');
    return data.slice(0, -1).map((d) => JSON.parse(d));
  };
  const chunks = await stream();
  t.equal(chunks.map((c) => c.delta ?? '').join(''), 'Hello from acme.');
  t.match(chunks.at(-1), {
    finish_reason: 'stop',
    usage: { input_tokens: 10, output_tokens: 3 },
    metadata: { vendor: 'acme-a', cost_usd: LARGE_MICROS / 1e6 },
  });

  a.failures.push(503);
  const failedOver = await stream();
  t.equal(failedOver.map((c) => c.delta ?? '').join(''), 'Hello from acme.');
  t.match(failedOver.at(-1).metadata, { vendor: 'acme-b', attempts: FAILED_OVER });
  t.match(b.requests, [{ body: { model: 'acme-large', stream: true } }]);
});
