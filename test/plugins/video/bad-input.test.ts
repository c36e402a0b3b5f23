import t from 'tap';
import { activate } from '../../helpers/app.js';
import { cancel, generate, getJob, noFfmpegApp, openHolds, rows, videoApp } from './setup.js';

// Without ffmpeg (local-render) or a configured vendor nothing serves video.generate: the area says so (503),
// and no request, good or bad, writes a job or moves money.

t.test('bad input and no vendor (no ffmpeg on PATH): 4xx or 503, nothing queued, nothing charged', async (t) => {
  const c = await noFfmpegApp(t);
  const before = await c.app.svc.wallet.balance(c.accountId);
  const cases: Array<[Record<string, unknown>, number, string]> = [
    [{}, 400, 'validation_failed'],
    [{ prompt: '' }, 400, 'validation_failed'],
    [{ prompt: 'x', duration_seconds: 0 }, 400, 'validation_failed'],
    [{ prompt: 'x', duration_seconds: 61 }, 400, 'validation_failed'],
    [{ prompt: 'x', aspect: '4:3' }, 400, 'validation_failed'],
    [{ prompt: 'x', resolution: '8k' }, 400, 'validation_failed'],
    [{ prompt: 'x', prefer: 'fastest' }, 400, 'validation_failed'],
    [{ prompt: 'x', colour: 'red' }, 400, 'validation_failed'],
    [{ prompt: 'x', reference_image_url: 'not a url' }, 400, 'validation_failed'],
    [{ prompt: 'x' }, 503, 'no_vendor_available'],
    [{ prompt: 'x', vendor: 'nobody' }, 503, 'no_vendor_available'],
  ];
  for (const [body, status, code] of cases) {
    const res = await generate(c, body);
    t.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
    t.equal(res.json().error.code, code);
  }
  const none = await generate(c, { prompt: 'x' });
  t.match(none.json().error.message, /ffmpeg/, 'the 503 says how a laptop gets a video engine');
  t.same(await rows(c.app), [], 'no job written');
  t.equal(await c.app.svc.wallet.balance(c.accountId), before, 'nothing charged');
  t.equal(await openHolds(c), 0, 'nothing held');
});

t.test('unknown and other accounts’ jobs are 404; without a key 401', async (t) => {
  const c = await videoApp(t);
  t.equal((await getJob(c, 'job_nope')).statusCode, 404);
  t.equal((await cancel(c, 'job_nope')).statusCode, 404);
  const other = await activate(c.app);
  t.equal((await getJob(c, 'job_nope', other.auth)).json().error.code, 'not_found');
  t.equal((await c.app.inject({ method: 'GET', url: '/v1/video/jobs/job_x' })).statusCode, 401);
});
