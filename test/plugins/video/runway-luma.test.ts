import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { openAiVideosFake } from '../../fakes/openai-videos.js';
import { solidPng } from '../../fakes/test-images.js';
import { lumaFake, runwayFake } from '../../fakes/video-job-apis.js';
import type { Tap } from '../../helpers/tap.js';
import { until as waitFor } from '../../helpers/wait.js';
import { download, probe } from './probe.js';
import { cancel, type Ctx, FAST, generate, noFfmpegApp, openHolds, rows, until } from './setup.js';

// Runway, Luma and Sora fakes behind one gateway: routing by prefer, model and vendor, 4k only
// at Luma, failover at submit, a vendor's failure after it, a cancel; the wallet exact each time.

async function app(t: Tap, video: Record<string, unknown> = {}, sora?: string) {
  const [runway, luma, soraFake] = await Promise.all([runwayFake(), lumaFake(), openAiVideosFake()]);
  for (const f of [runway, luma, soraFake]) t.teardown(f.close);
  const png = await solidPng(64, 64);
  const img = createServer((_q, s) => void s.writeHead(200, { 'content-type': 'image/png' }).end(png));
  await new Promise<void>((r) => img.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => img.close(r)));
  const c = await noFfmpegApp(t, {
    vendors: [
      { id: 'runway', use: 'runway', config: { api_key: 'rw-key', base_url: runway.url } },
      { id: 'luma', use: 'luma', config: { api_key: 'luma-key', base_url: `${luma.url}` } },
      { id: 'sora', use: 'openai-video', config: { api_key: 'sk-video', base_url: sora ?? soraFake.url } },
    ],
    plugins: { video: { ...FAST.plugins.video, ...video } },
  });
  return {
    ...c,
    runway,
    luma,
    sora: soraFake,
    image: `http://127.0.0.1:${(img.address() as AddressInfo).port}/ref.png`,
  };
}

const spent = async (c: Ctx, before: number) => before - (await c.app.svc.wallet.balance(c.accountId));

t.test('Runway: an image animated by gen4_turbo, the task output copied, 5 s at 0.05 USD', async (t) => {
  const c = await app(t);
  c.runway.pollsUntilDone = 2;
  const before = await c.app.svc.wallet.balance(c.accountId);
  const res = await generate(c, {
    prompt: 'waves',
    vendor: 'runway',
    reference_image_url: c.image,
    duration_seconds: 4,
  });
  t.equal(res.statusCode, 202, res.body);
  const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
  t.match(done, { state: 'succeeded', vendor: 'runway', model: 'gen4_turbo', cost_usd: 0.25 });
  const job = [...c.runway.jobs.values()][0];
  t.match(job.body, { model: 'gen4_turbo', promptText: 'waves', ratio: '1280:720', duration: 5 });
  t.match(job.body.promptImage, /^data:image\/png;base64,/);
  t.equal(job.headers['x-runway-version'], '2024-11-06');
  t.equal(job.headers.authorization, 'Bearer rw-key');
  const p = await probe(c.dir, (await download(c.app, done.video_url)).body);
  t.same([p.width, p.height], [1280, 720]);
  t.ok(Math.abs(p.duration - 5) < 0.1);
  t.equal(await spent(c, before), 250_000);
  t.equal(await openHolds(c), 0);
});

t.test('Luma at 4k (no other vendor makes it), the image as keyframe frame0, 5 s of ray-2', async (t) => {
  const c = await app(t);
  const before = await c.app.svc.wallet.balance(c.accountId);
  const body = { prompt: 'city', resolution: '4k', aspect: '1:1', duration_seconds: 4, prefer: 'smartest' };
  const pinned = await generate(c, { ...body, vendor: 'sora' });
  t.equal(pinned.statusCode, 422, pinned.body);
  t.match(pinned.json().error, { param: 'resolution', details: { vendors: ['luma'] }, message: /luma/ });
  const res = await generate(c, { ...body, reference_image_url: c.image });
  t.equal(res.statusCode, 202, res.body);
  const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
  t.match(done, { state: 'succeeded', vendor: 'luma', model: 'ray-2' });
  const job = [...c.luma.jobs.values()][0];
  t.match(job.body, { model: 'ray-2', resolution: '4k', aspect_ratio: '1:1', duration: '5s' });
  t.same(job.body.keyframes, { frame0: { type: 'image', url: c.image } });
  t.ok(Math.abs((await probe(c.dir, (await download(c.app, done.video_url)).body)).duration - 5) < 0.1);
  t.equal((await download(c.app, done.thumbnail_url)).type, 'image/jpeg');
  t.equal(await spent(c, before), 5 * 640_000);
  t.equal(await openHolds(c), 0);
});

t.test(
  'failover at submit only when it never left: Sora unreachable, Luma takes the job, only it charged',
  async (t) => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r)); // nobody listens there now: connection refused
    const c = await app(t, {}, `http://127.0.0.1:${port}/v1`);
    const before = await c.app.svc.wallet.balance(c.accountId);
    const res = await generate(c, { prompt: 'x', prefer: 'smartest', duration_seconds: 5 });
    const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
    t.match(done, { state: 'succeeded', vendor: 'luma', model: 'ray-2' });
    t.equal(await spent(c, before), 5 * 140_000, 'the Luma clip, settled below the Sora hold');
    t.equal(await openHolds(c), 0);
  }
);

t.test('a submit answered 500 may have made a job: failed, no other vendor asked, nothing charged', async (t) => {
  const c = await app(t);
  c.sora.submitStatus = [500];
  const before = await c.app.svc.wallet.balance(c.accountId);
  const res = await generate(c, { prompt: 'x', prefer: 'smartest', duration_seconds: 5 });
  const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
  t.match(done, {
    state: 'failed',
    error: { code: 'vendor_error', message: /^sora failed the submit after it was sent: it may have started the job/ },
  });
  t.equal(c.luma.jobs.size, 0, 'Luma never asked');
  t.equal(await spent(c, before), 0);
  t.equal(await openHolds(c), 0);
});

t.test('a vendor that takes the job, then hangs: the job fails at the submit timeout, no failover', async (t) => {
  const c = await app(t, { submit_timeout_seconds: 0.5 });
  c.sora.hangAfterAccept = true;
  const before = await c.app.svc.wallet.balance(c.accountId);
  const res = await generate(c, { prompt: 'x', prefer: 'smartest', duration_seconds: 5 });
  const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
  t.match(done, {
    state: 'failed',
    error: {
      code: 'vendor_timeout',
      message: /^sora did not answer the submit in time: it may have started the job, so no other vendor was tried/,
    },
  });
  t.equal(c.sora.jobs.size, 1, 'Sora has the job');
  t.equal(c.luma.jobs.size, 0, 'no second job at Luma');
  const [row] = (await rows(c.app)).filter((r) => r.job_id === done.job_id);
  t.type(JSON.parse(row.route).submit_started_at, 'number', 'the submit was recorded before it was sent');
  t.equal(await spent(c, before), 0);
  t.equal(await openHolds(c), 0);
});

t.test('a failure after submit fails the job (released); a cancel mid-run deletes the task', async (t) => {
  const c = await app(t);
  const before = await c.app.svc.wallet.balance(c.accountId);
  c.luma.fail = true;
  const failed = await generate(c, { prompt: 'x', vendor: 'luma' });
  const f = await until(c, failed.json().job_id, ['failed', 'succeeded']);
  t.match(f, { state: 'failed', error: { code: 'vendor_error', message: /rejected/ } });
  c.runway.pollsUntilDone = 1_000_000;
  const { job_id } = (await generate(c, { prompt: 'x', vendor: 'runway', reference_image_url: c.image })).json();
  await until(c, job_id, ['running']);
  t.same((await cancel(c, job_id)).json(), { ok: true });
  await waitFor('the Runway task deleted', () => c.runway.deletes.length === 1);
  t.equal(await spent(c, before), 0);
  t.equal(await openHolds(c), 0);
});

t.test(
  'Runway needs an image: asked without one, 422 naming it (nothing held or written); unpinned, another vendor',
  async (t) => {
    const c = await app(t);
    const before = await c.app.svc.wallet.balance(c.accountId);
    for (const sel of [{ model: 'gen4_turbo' }, { vendor: 'runway' }]) {
      const res = await generate(c, { prompt: 'x', ...sel });
      t.equal(res.statusCode, 422, res.body);
      t.match(res.json().error, {
        code: 'unprocessable',
        param: 'reference_image_url',
        message:
          /^reference_image_url is required by .*: it animates an image and cannot start from text alone\. Without one it is offered by: luma, sora/,
        details: { vendors: ['luma', 'sora'] },
      });
    }
    t.same(await rows(c.app), [], 'no job written');
    t.equal(await openHolds(c), 0, 'nothing held');
    t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'nothing charged');
    const any = await until(c, (await generate(c, { prompt: 'x', prefer: 'cheapest' })).json().job_id, ['succeeded']);
    t.equal(any.vendor, 'luma');
    t.equal(c.runway.jobs.size, 0);
  }
);

t.test('only Runway configured: a request without an image is 422 saying no configured vendor makes it', async (t) => {
  const runway = await runwayFake();
  t.teardown(runway.close);
  const c = await noFfmpegApp(t, {
    vendors: [{ id: 'runway', use: 'runway', config: { api_key: 'rw-key', base_url: runway.url } }],
  });
  const res = await generate(c, { prompt: 'x' });
  t.equal(res.statusCode, 422, res.body);
  t.match(res.json().error, {
    param: 'reference_image_url',
    message: /reference_image_url is required .* No configured vendor offers it/,
    details: { vendors: [] },
  });
  t.same(await rows(c.app), []);
  t.equal(await openHolds(c), 0);
});
