import t from 'tap';
import { activate } from '../../../helpers/app.js';
import { sleep } from '../../../helpers/wait.js';
import { batchApp, submit, type Ctx } from './setup.js';

const list = (c: Ctx, query: string, auth = c.auth) =>
  c.app.inject({ method: 'GET', url: `/v1/ai/batches${query}`, headers: auth });

t.test("GET /v1/ai/batches: newest first, paged by cursor, filtered by state, only the caller's", async (t) => {
  const c = await batchApp(t);
  // Stopped: the batches stay queued unless canceled, so the states are known.
  await c.app.svc.jobs.stop();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await submit(c, { messages: `m${i}`, model: 'alpha' })).json().batch_id);
    await sleep(2);
  }
  for (const id of [ids[1], ids[3]])
    t.equal(
      (await c.app.inject({ method: 'POST', url: `/v1/ai/batches/${id}/cancel`, headers: c.auth })).statusCode,
      200
    );
  const other = await activate(c.app);
  const theirs = (await submit(c, { messages: 'theirs', model: 'alpha' }, other.auth)).json().batch_id;

  const all = await list(c, '');
  t.equal(all.statusCode, 200, all.body);
  t.same(
    all.json().items.map((b: any) => b.batch_id),
    [...ids].reverse(),
    'newest first, theirs not among them'
  );
  t.equal(all.json().next_cursor, null);
  // The same object as GET /v1/ai/batches/{id}.
  for (const item of all.json().items)
    t.same(
      item,
      (await c.app.inject({ method: 'GET', url: `/v1/ai/batches/${item.batch_id}`, headers: c.auth })).json()
    );

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: any = (await list(c, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json();
    t.ok(page.items.length <= 2);
    seen.push(...page.items.map((b: any) => b.batch_id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  t.equal(pages, 3);
  t.same(seen, [...ids].reverse(), 'the pages add up to the list, each batch once');

  t.same(
    (await list(c, '?state=canceled')).json().items.map((b: any) => b.batch_id),
    [ids[3], ids[1]]
  );
  const queued = (await list(c, '?state=queued&limit=2')).json();
  t.same(
    queued.items.map((b: any) => b.batch_id),
    [ids[4], ids[2]]
  );
  t.same((await list(c, `?state=queued&limit=2&cursor=${queued.next_cursor}`)).json(), {
    items: [(await list(c, '?state=queued')).json().items[2]],
    next_cursor: null,
  });
  t.same((await list(c, '?state=succeeded')).json(), { items: [], next_cursor: null });

  const mine = (await list(c, '', other.auth)).json();
  t.same(
    mine.items.map((b: any) => b.batch_id),
    [theirs],
    'the other account sees only its own'
  );

  for (const q of ['?state=done', '?limit=0', '?limit=201', '?cursor=nonsense', '?nope=1']) {
    const r = await list(c, q);
    t.equal(r.statusCode, 400, q);
    t.equal(r.json().error.code, 'validation_failed', q);
  }
});
