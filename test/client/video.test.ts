import t from 'tap';
import { clientApp, rejects } from './client-app.js';
import { until } from '../helpers/wait.js';

// client.video against a listening gateway on the embedded local-render engine (ffmpeg).

t.test('generate, get until succeeded, idempotent retry, cancel of a finished job is invalid_state', async (t) => {
  const { c } = await clientApp(t, { plugins: { video: { poll_ms: 15, max_poll_ms: 50 } } });
  const job = await c.video.generate({ prompt: 'a client test', duration_seconds: 1 }, { idempotencyKey: 'v-1' });
  t.match(job, { job_id: /^job_/, state: 'queued' });
  const again = await c.video.generate({ prompt: 'a client test', duration_seconds: 1 }, { idempotencyKey: 'v-1' });
  t.equal(again.job_id, job.job_id, 'the retry answers the same job');
  let last = job;
  // ffmpeg renders at background priority: with both cores busy (the suite beside it) it may take a while.
  const ended = ['succeeded', 'failed', 'canceled'];
  await until('the video', async () => ended.includes((last = await c.video.get(job.job_id)).state), 90_000);
  t.equal(last.state, 'succeeded', (last as { error?: { message?: string } }).error?.message);
  t.match(last, { vendor: 'local-render', placeholder: true, video_url: /^http/, thumbnail_url: /^http/ });
  await rejects(t, c.video.cancel(job.job_id), { code: 'invalid_state', status: 409 }, 'already succeeded');
  const page = await c.video.list({ state: 'succeeded', limit: 1 });
  t.same(
    page.items.map((j) => j.job_id),
    [job.job_id]
  );
  t.equal(page.next_cursor, null);
  t.same((await c.video.list({ state: 'running' })).items, []);
  const walked = [];
  for await (const j of c.video.iterate({ limit: 1 })) walked.push(j.job_id);
  t.same(walked, [job.job_id], 'iterate walks the one job');
  await rejects(t, c.video.get('job_nope'), { code: 'not_found', status: 404 }, 'unknown job');
  await rejects(t, c.video.generate({ prompt: 'x', resolution: '4k' }), { code: 'unprocessable', status: 422 }, '4k');
});
