import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { openAiVideosFake } from '../../fakes/openai-videos.js';
import { solidPng } from '../../fakes/test-images.js';
import { until as waitFor } from '../../helpers/wait.js';
import { download, probe } from './probe.js';
import { cancel, generate, noFfmpegApp, openHolds, rows, until, type Ctx } from './setup.js';
import type { videoApp } from './setup.js';

// openai-video against a fake of OpenAI's Videos API. sora-2 is 0.10 USD a second, sora-2-pro
// 0.30 (720p) and 0.50 (1080p): a 5-s request is made as 8 s, so held and charged at 8 s.

async function app(t: Parameters<typeof videoApp>[0]) {
  const fake = await openAiVideosFake();
  t.teardown(fake.close);
  const c = await noFfmpegApp(t, {
    vendors: [{ id: 'sora', use: 'openai-video', config: { api_key: 'sk-video', base_url: fake.url } }],
  });
  return { ...c, fake };
}

async function spent(c: Ctx, before: number): Promise<number> {
  return before - (await c.app.svc.wallet.balance(c.accountId));
}

t.test('a job through the fake to succeeded: the MP4 copied, ffprobe reads it, 8 s charged', async (t) => {
  const c = await app(t);
  c.fake.pollsUntilDone = 2;
  const png = await solidPng(64, 64);
  const img = createServer((_q, s) => void s.writeHead(200, { 'content-type': 'image/png' }).end(png));
  await new Promise<void>((r) => img.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => img.close(r)));
  const ref = `http://127.0.0.1:${(img.address() as AddressInfo).port}/a.png`;
  const before = await c.app.svc.wallet.balance(c.accountId);
  const res = await generate(c, { prompt: 'a fox', duration_seconds: 5, prefer: 'cheapest', reference_image_url: ref });
  t.equal(res.statusCode, 202, res.body);
  const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
  t.equal(done.state, 'succeeded', JSON.stringify(done));
  t.match(done, { vendor: 'sora', model: 'sora-2', cost_usd: 0.8 });
  t.notOk(done.placeholder);
  const job = [...c.fake.jobs.values()][0];
  t.same(job.form, { prompt: 'a fox', model: 'sora-2', seconds: '8', size: '1280x720' });
  t.same(job.reference, { type: 'image/png', size: png.length }, 'the reference image as input_reference');
  t.ok(c.fake.auth.every((a) => a === 'Bearer sk-video'));
  const p = await probe(c.dir, (await download(c.app, done.video_url)).body);
  t.same([p.width, p.height], [1280, 720]);
  t.ok(Math.abs(p.duration - 8) < 0.1, `duration ${p.duration}`);
  t.equal((await download(c.app, done.thumbnail_url)).type, 'image/jpeg');
  t.equal(await spent(c, before), 800_000, 'exactly 8 s at 0.10 USD');
  t.equal(await openHolds(c), 0);
});

t.test('1080p: only sora-2-pro makes it, at its 1792x1024 size, 0.50 USD a second', async (t) => {
  const c = await app(t);
  const before = await c.app.svc.wallet.balance(c.accountId);
  const res = await generate(c, { prompt: 'x', duration_seconds: 4, resolution: '1080p', aspect: '9:16' });
  const done = await until(c, res.json().job_id, ['succeeded', 'failed']);
  t.match(done, { state: 'succeeded', model: 'sora-2-pro' });
  t.equal([...c.fake.jobs.values()][0].form.size, '1024x1792');
  t.equal(await spent(c, before), 2_000_000);
});

t.test('canceled while the vendor runs it: released in full, the vendor video deleted', async (t) => {
  const c = await app(t);
  c.fake.pollsUntilDone = 1_000_000;
  const before = await c.app.svc.wallet.balance(c.accountId);
  const { job_id } = (await generate(c, { prompt: 'x' })).json();
  await until(c, job_id, ['running']);
  t.ok((await c.app.svc.wallet.balance(c.accountId)) < before, 'held while it runs');
  const r = await cancel(c, job_id);
  t.same(r.json(), { ok: true }, r.body);
  t.equal((await until(c, job_id, ['canceled'])).state, 'canceled');
  await waitFor('the vendor delete', () => c.fake.deletes.length === 1);
  t.equal(await spent(c, before), 0);
  t.equal(await openHolds(c), 0);
  const again = await cancel(c, job_id);
  t.equal(again.statusCode, 409);
  t.equal(again.json().error.code, 'invalid_state');
});

t.test("the vendor fails the job after submit: failed, released; another account's job is 404", async (t) => {
  const c = await app(t);
  c.fake.outcome = 'failed';
  const before = await c.app.svc.wallet.balance(c.accountId);
  const { job_id } = (await generate(c, { prompt: 'x' })).json();
  const done = await until(c, job_id, ['failed', 'succeeded']);
  t.match(done, { state: 'failed', error: { code: 'vendor_error', message: /blocked/ } });
  t.equal(await spent(c, before), 0);
  t.equal(await openHolds(c), 0);
  t.equal((await cancel(c, job_id)).json().error.code, 'invalid_state');
  const other = await (await import('../../helpers/app.js')).activate(c.app);
  t.equal(
    (await c.app.inject({ method: 'GET', url: `/v1/video/jobs/${job_id}`, headers: other.auth })).statusCode,
    404
  );
  t.equal((await cancel(c, job_id, other.auth)).statusCode, 404);
});

t.test('not offered by Sora: 1:1 and 4k are 422 naming who does (nobody here), nothing held', async (t) => {
  const c = await app(t);
  for (const [body, param] of [
    [{ aspect: '1:1' }, 'aspect'],
    [{ resolution: '4k' }, 'resolution'],
    [{ duration_seconds: 20 }, 'duration_seconds'],
    [{ model: 'sora-2', resolution: '1080p' }, 'resolution'],
  ] as const) {
    const r = await generate(c, { prompt: 'x', ...body });
    t.equal(r.statusCode, 422, r.body);
    t.equal(r.json().error.param, param);
  }
  t.same(await rows(c.app), []);
  t.equal(await openHolds(c), 0);
});
