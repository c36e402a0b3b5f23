import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildApp } from '../../../core/app.js';
import { loadConfig } from '../../../config/load.js';
import { solidPng } from '../../fakes/test-images.js';
import { download, probe } from './probe.js';
import { generate, openHolds, rows, until, videoApp } from './setup.js';

// local-render end to end: a real MP4 made by ffmpeg, copied into the result store, read back
// with ffprobe; 1 cent a second, so the wallet shows the exact charge.
const PRICED = { vendors: [{ id: 'local-render', use: 'local-render', config: { price_per_second_usd: 0.01 } }] };

async function imageServer(t: Parameters<typeof videoApp>[0]): Promise<string> {
  const png = await solidPng(320, 200, '#3366cc');
  const server = createServer((req, res) => {
    if (req.url === '/ref.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    res.writeHead(req.url === '/text' ? 200 : 404, { 'content-type': 'text/plain' }).end('not an image');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('a prompt alone: a 9:16 MP4 of the asked length and a thumbnail, charged at the seconds made', async (t) => {
  const c = await videoApp(t, PRICED);
  const before = await c.app.svc.wallet.balance(c.accountId);
  const res = await generate(c, { prompt: 'A paper boat on a rainy street', duration_seconds: 3, aspect: '9:16' });
  t.equal(res.statusCode, 202, res.body);
  t.equal(res.json().state, 'queued');
  const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  t.equal(done.vendor, 'local-render');
  t.equal(done.placeholder, true, 'the result says it is a placeholder render');
  const video = await download(c.app, done.video_url);
  t.equal(video.type, 'video/mp4');
  const p = await probe(c.dir, video.body);
  t.ok(Math.abs(p.duration - 3) < 0.1, `duration ${p.duration}`);
  t.same([p.width, p.height], [720, 1280]);
  const thumb = await download(c.app, done.thumbnail_url);
  t.equal(thumb.type, 'image/jpeg');
  t.same([...thumb.body.subarray(0, 2)], [0xff, 0xd8]);
  t.equal(done.cost_usd, 0.03);
  t.equal(before - (await c.app.svc.wallet.balance(c.accountId)), 30_000, 'exactly 3 s at 0.01 USD');
  t.equal(await openHolds(c), 0);
});

t.test('a reference image, fetched through the egress guard, panned in a 1:1 1080p clip', async (t) => {
  const c = await videoApp(t, PRICED);
  const base = await imageServer(t);
  const body = { prompt: 'zoom', duration_seconds: 4, aspect: '1:1', resolution: '1080p' };
  const res = await generate(c, { ...body, reference_image_url: `${base}/ref.png` });
  const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  const p = await probe(c.dir, (await download(c.app, done.video_url)).body);
  t.ok(Math.abs(p.duration - 4) < 0.1, `duration ${p.duration}`);
  t.same([p.width, p.height], [1080, 1080]);

  // Bad references and what local-render does not make: 4xx, nothing written.
  const before = await c.app.svc.wallet.balance(c.accountId);
  const n = (await rows(c.app)).length;
  for (const [extra, status, param] of [
    [{ reference_image_url: `${base}/missing.png` }, 422, 'reference_image_url'],
    [{ reference_image_url: `${base}/text` }, 422, 'reference_image_url'],
    [{ reference_image_url: 'http://169.254.169.254/latest' }, 400, 'reference_image_url'],
    [{ resolution: '4k' }, 422, 'resolution'],
  ] as const) {
    const r = await generate(c, { ...body, ...extra });
    t.equal(r.statusCode, status, r.body);
    t.equal(r.json().error.param, param);
  }
  t.equal((await rows(c.app)).length, n, 'nothing queued');
  t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'nothing charged');
});

t.test('idempotent submit: the same key answers the same job, once', async (t) => {
  const c = await videoApp(t, PRICED);
  const body = { prompt: 'once', duration_seconds: 1, idempotency_key: 'k1' };
  const a = await generate(c, body);
  const b = await generate(c, body);
  t.equal(b.headers['idempotent-replayed'], 'true');
  t.equal(b.json().job_id, a.json().job_id);
  t.equal((await generate(c, { ...body, prompt: 'other' })).json().error.code, 'idempotency_key_reused');
  t.equal((await rows(c.app)).length, 1);
  await until(c, a.json().job_id, ['succeeded']);
});

t.test('a restart mid-render: the new gateway renders it again and charges it once', async (t) => {
  const c = await videoApp(t, PRICED);
  const before = await c.app.svc.wallet.balance(c.accountId);
  const { job_id } = (await generate(c, { prompt: 'restart', duration_seconds: 8 })).json();
  await until(c, job_id, ['running']);
  // Closing the gateway kills the ffmpeg under way: its partial file is left, no video.
  await c.app.close();
  const next = await buildApp(loadConfig({ object: c.config as unknown as Record<string, unknown>, env: {} }));
  t.teardown(() => next.close());
  await next.ready();
  const e = { ...c, app: next };
  const done = await until(e, job_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  t.ok(Math.abs((await probe(c.dir, (await download(next, done.video_url)).body)).duration - 8) < 0.1);
  t.equal(before - (await next.svc.wallet.balance(c.accountId)), 80_000, 'charged once, 8 s');
  t.equal(await openHolds(e), 0);
});
