import t from 'tap';
import { lumaFake } from '../../fakes/video-job-apis.js';
import { activate } from '../../helpers/app.js';
import { cancel, type Ctx, generate, noFfmpegApp, rows, until } from './setup.js';

// GET /v1/video/jobs: the account's jobs newest first, `limit` a page, `next_cursor` to the end,
// `state` to keep one state; another account's jobs never appear.

const list = (c: Ctx, query: string, headers = c.auth) =>
  c.app.inject({ method: 'GET', url: `/v1/video/jobs${query}`, headers });

t.test('pages newest first to the end, filters by state, shows only the caller’s jobs', async (t) => {
  const luma = await lumaFake();
  t.teardown(luma.close);
  luma.pollsUntilDone = Number.MAX_SAFE_INTEGER; // every job stays running until canceled
  const c = await noFfmpegApp(t, {
    vendors: [{ id: 'luma', use: 'luma', config: { api_key: 'luma-key', base_url: luma.url } }],
  });
  const other = await activate(c.app);
  const mine: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await generate(c, { prompt: `clip ${i}`, duration_seconds: 5 });
    t.equal(res.statusCode, 202, res.body);
    mine.push(res.json().job_id);
  }
  const theirs = (await generate(c, { prompt: 'theirs', duration_seconds: 5 }, other.auth)).json().job_id;
  for (const id of mine.slice(0, 2)) t.equal((await cancel(c, id)).statusCode, 200);
  for (const id of mine.slice(2)) await until(c, id, ['running']);

  // The order the list promises, from the rows: created_at, then job id, both descending.
  const expected = (await rows(c.app))
    .filter((r) => r.account_id === c.accountId)
    .sort((x, y) => Number(y.created_at) - Number(x.created_at) || (y.job_id < x.job_id ? -1 : 1))
    .map((r) => r.job_id as string);
  t.same([...expected].sort(), [...mine].sort());

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await list(c, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    t.equal(res.statusCode, 200, res.body);
    const page = res.json();
    t.ok(page.items.length <= 2);
    seen.push(...page.items.map((j: { job_id: string }) => j.job_id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  t.same(seen, expected, 'every job once, newest first, over three pages');
  t.equal(pages, 3);
  t.notOk(seen.includes(theirs), 'not another account’s');

  const all = (await list(c, '')).json();
  t.equal(all.items.length, 5, 'default limit holds them all');
  t.equal(all.next_cursor, null);
  t.match(all.items[0], { job_id: expected[0], vendor: 'luma', duration_seconds: 5, cost_usd: 0 });

  const canceled = (await list(c, '?state=canceled')).json();
  t.same(canceled.items.map((j: { job_id: string }) => j.job_id).sort(), mine.slice(0, 2).sort());
  t.ok(canceled.items.every((j: { state: string }) => j.state === 'canceled'));
  t.same((await list(c, '?state=running')).json().items.length, 3);
  t.same((await list(c, '?state=succeeded')).json(), { items: [], next_cursor: null });

  const theirList = (await list(c, '', other.auth)).json();
  t.same(
    theirList.items.map((j: { job_id: string }) => j.job_id),
    [theirs],
    'the other account sees its one job'
  );

  for (const q of ['?limit=0', '?limit=201', '?state=done', '?cursor=bm9wZQ', '?colour=red']) {
    const res = await list(c, q);
    t.equal(res.statusCode, 400, `${q}: ${res.body}`);
    t.equal(res.json().error.code, 'validation_failed');
  }
  t.equal((await c.app.inject({ method: 'GET', url: '/v1/video/jobs' })).statusCode, 401);
});
