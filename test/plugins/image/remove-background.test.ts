import t from 'tap';
import sharp from 'sharp';
import { alphaAt, subjectOnFlat } from '../../fakes/test-images.js';
import { REMOVE_BG_KEY, removeBgFake } from '../../fakes/remove-bg-fake.js';
import { imageApp } from './setup.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../config/load.js';
import { buildApp } from '../../../core/app.js';
import { createLogger } from '../../../core/logger.js';
import { activate, freshDatabaseUrl } from '../../helpers/app.js';
import { captureLog } from '../../helpers/log-lines.js';

// database-independent: routing and charging; the router and wallet are core's tests', on both.

// Routing and charging of remove_background between the embedded engine and remove.bg (a fake
// on loopback). The embedded engine's model runs in remove-background-local.test.ts alone
// (it takes tens of seconds to load): here it is only listed, never invoked.

const b64 = (b: Buffer) => b.toString('base64');
const rbg = (id: string, baseUrl: string, apiKey = REMOVE_BG_KEY) => ({
  id,
  use: 'remove-bg',
  config: { api_key: apiKey, base_url: baseUrl },
});
const removal = async () => ({
  input: { base64: b64(await subjectOnFlat(64)) },
  operations: [{ op: 'remove_background' }],
});

t.test('no config: the embedded engine serves, discovery shows the price (times the markup)', async (t) => {
  const { app } = await imageApp(t, { wallet: { markup: 2 } });
  t.same(
    app.svc.router.candidates('image.remove_background', { region: 'global' }).map((c: any) => c.id ?? c.instance?.id),
    ['imgly-background']
  );
  // Discovery lists routes: the removal's price is told on the one route that runs it.
  const detail = (await app.inject({ url: '/v1/discovery/image.process' })).json();
  t.match(detail.description, /remove_background.*0\.02 USD/);
});

t.test(
  'remove-bg pinned by routes: it serves, the cut-out has alpha, charged as configured, key never shown',
  async (t) => {
    const fake = await removeBgFake(t);
    const { post, balance, results } = await imageApp(t, {
      vendors: [rbg('rbg', fake.baseUrl)],
      routes: { 'image.remove_background': { strategy: 'fallback', targets: ['rbg'] } },
      plugins: { image: { remove_background_price_usd: 0.005 } },
    });
    const before = await balance();
    const res = await post('/v1/image/process', await removal());
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.headers['x-svc-vendor'], 'rbg');
    t.equal(before - (await balance()), 5000, 'plugins.image.remove_background_price_usd');
    t.match(res.json(), { mime: 'image/png', width: 64, height: 64 });
    const out = Buffer.from(await (await fetch(res.json().image_url)).arrayBuffer());
    t.match(await sharp(out).metadata(), { format: 'png', hasAlpha: true });
    t.ok((await alphaAt(out, 1, 1)) < 10, 'the background is transparent');
    t.equal(await alphaAt(out, 32, 32), 255, 'the subject is kept');
    t.equal(fake.requests.length, 1);
    t.equal(fake.requests[0].apiKey, REMOVE_BG_KEY);
    t.notMatch(JSON.stringify(res.headers) + res.body, REMOVE_BG_KEY);
    t.equal(await results(), 1);
  }
);

t.test('remove.bg refusing: nothing charged, nothing stored, the key in no answer', async (t) => {
  const fake = await removeBgFake(t);
  const { post, balance, results } = await imageApp(t, {
    vendors: [rbg('rbg', fake.baseUrl, 'rbg-wrong-key-1234')],
    routes: { 'image.remove_background': { strategy: 'fallback', targets: ['rbg'] } },
  });
  const before = await balance();
  const auth = await post('/v1/image/process', await removal());
  t.ok(auth.statusCode >= 500, `auth failure is the gateway's vendor problem (${auth.statusCode})`);
  t.notMatch(auth.body, 'rbg-wrong-key-1234');
  t.equal(await balance(), before);
  t.equal(await results(), 0);
});

t.test('the caller’s image refused by remove.bg (400): 422, not failed over, nothing charged', async (t) => {
  const fake = await removeBgFake(t);
  const second = await removeBgFake(t);
  const { post, balance, results } = await imageApp(t, {
    vendors: [rbg('rbg', fake.baseUrl), rbg('rbg2', second.baseUrl)],
    routes: { 'image.remove_background': { strategy: 'fallback', targets: ['rbg', 'rbg2'] } },
  });
  fake.failNext(400);
  const before = await balance();
  const res = await post('/v1/image/process', await removal());
  t.equal(res.statusCode, 422, res.body);
  t.equal(second.requests.length, 0, 'no other remover tried for a bad image');
  t.equal(await balance(), before);
  t.equal(await results(), 0);
});

t.test('failover: remove.bg out of credits (402) then the next candidate serves, charged once', async (t) => {
  const fake = await removeBgFake(t);
  const second = await removeBgFake(t);
  const { app, post, balance } = await imageApp(t, {
    vendors: [rbg('rbg', fake.baseUrl), rbg('rbg2', second.baseUrl)],
  });
  t.same(
    app.svc.router.candidates('image.remove_background', { region: 'global' }).map((c: any) => c.id ?? c.instance?.id),
    ['rbg', 'rbg2', 'imgly-background'],
    'without routes: the configured removers, then the embedded engine'
  );
  fake.failNext(402);
  const before = await balance();
  const res = await post('/v1/image/process', await removal());
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.headers['x-svc-vendor'], 'rbg2');
  t.equal(fake.requests.length, 1);
  t.equal(second.requests.length, 1);
  t.equal(before - (await balance()), 10_000, 'the default price, once');
});

t.test('at log level trace, the remove.bg key is in no log line, on success or failure', async (t) => {
  const fake = await removeBgFake(t);
  const dir = mkdtempSync(join(tmpdir(), 'svc-rbg-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = loadConfig({
    object: {
      data_dir: dir,
      database: { url: await freshDatabaseUrl(t, dir) },
      vendors: [rbg('rbg', fake.baseUrl)],
      routes: { 'image.remove_background': { strategy: 'fallback', targets: ['rbg'] } },
    },
    env: {},
  });
  const { lines, stream } = captureLog();
  const app = await buildApp(config, { logger: createLogger('trace', stream) });
  t.teardown(() => app.close());
  await app.ready();
  const { auth } = await activate(app);
  const call = async () =>
    app.inject({ method: 'POST', url: '/v1/image/process', headers: auth, payload: await removal() });
  t.equal((await call()).statusCode, 200);
  fake.failNext(429);
  const limited = await call();
  t.equal(limited.statusCode, 502, 'rate limited, no other candidate: vendor_error');
  t.match(limited.json().error.details.attempts, [{ vendor: 'rbg', status: 'rate_limited' }]);
  t.ok(
    lines.some((l) => l.includes('vendor call failed')),
    'the failure was logged'
  );
  t.same(
    lines.filter((l) => l.includes(REMOVE_BG_KEY)),
    []
  );
});

t.test('nothing removes backgrounds (the local library not installed): 503 saying how to install it', async (t) => {
  // Routing the capability to an instance that does not serve it leaves none, as a gateway
  // installed without its optional @imgly/background-removal-node would.
  const { post, balance, results } = await imageApp(t, {
    vendors: [{ id: 'pixels', use: 'sharp' }],
    routes: { 'image.remove_background': { targets: ['pixels'] } },
  });
  const before = await balance();
  const res = await post('/v1/image/process', await removal());
  t.equal(res.statusCode, 503, res.body);
  t.match(res.json().error, {
    code: 'no_vendor_available',
    message: /npm install @imgly\/background-removal-node.*onnxruntime-node-install-cuda=skip.*remove-bg/s,
  });
  t.equal(await balance(), before, 'nothing charged');
  t.equal(await results(), 0, 'nothing stored');
  const resize = await post('/v1/image/process', { input: (await removal()).input, width: 32 });
  t.equal(resize.statusCode, 200, 'the other operations still work');
});
