import t from 'tap';
import { activate } from '../../helpers/app.js';
import { pdfApp, STAND_INS } from './setup.js';

t.test('templates: create, get, list (paginated, newest first), delete; per account', async (t) => {
  const { app, auth, post } = await pdfApp(t, STAND_INS);
  const get = (url: string, headers = auth) => app.inject({ method: 'GET', url, headers });
  const ids: string[] = [];
  for (const name of ['a', 'b', 'c']) {
    const res = await post('/v1/pdf/templates', { name, html: `<h1>{{title}}</h1><p>${name}</p>` });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), { template_id: /^tpl_/, name, html: /{{title}}/, created_at: /Z$/ });
    ids.push(res.json().template_id);
  }
  const one = await get(`/v1/pdf/templates/${ids[1]}`);
  t.equal(one.statusCode, 200);
  t.equal(one.json().name, 'b');

  const page1 = (await get('/v1/pdf/templates?limit=2')).json();
  t.same(
    page1.items.map((i: any) => i.name),
    ['c', 'b']
  );
  t.type(page1.next_cursor, 'string');
  const page2 = (await get(`/v1/pdf/templates?limit=2&cursor=${page1.next_cursor}`)).json();
  t.same(
    page2.items.map((i: any) => i.name),
    ['a']
  );
  t.equal(page2.next_cursor, null);
  t.equal((await get('/v1/pdf/templates?limit=201')).statusCode, 400);

  // Another account sees none of them: 404, never 403 (the id must not be confirmed to exist).
  const other = await activate(app);
  t.equal((await get(`/v1/pdf/templates/${ids[0]}`, other.auth)).statusCode, 404);
  t.same((await get('/v1/pdf/templates', other.auth)).json(), { items: [], next_cursor: null });
  const del = await app.inject({ method: 'DELETE', url: `/v1/pdf/templates/${ids[0]}`, headers: other.auth });
  t.equal(del.statusCode, 404);
  t.match(del.json(), { error: { code: 'not_found', status: 404 } });
  const gen = await post('/v1/pdf/generate', { template_id: ids[0] }, other.auth);
  t.equal(gen.statusCode, 404, gen.body);

  const mine = await app.inject({ method: 'DELETE', url: `/v1/pdf/templates/${ids[0]}`, headers: auth });
  t.same(mine.json(), { ok: true });
  t.equal((await get(`/v1/pdf/templates/${ids[0]}`)).statusCode, 404);
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/pdf/templates/${ids[0]}`, headers: auth })).statusCode, 404);
});

t.test('a template over max_template_bytes is 413 naming the cap', async (t) => {
  const { post } = await pdfApp(t, { plugins: { pdf: { max_template_bytes: 2048 } } });
  const res = await post('/v1/pdf/templates', { name: 'big', html: 'x'.repeat(3000) });
  t.equal(res.statusCode, 413);
  t.match(res.json().error, { code: 'payload_too_large', param: 'html', message: /cap of 2048 bytes/ });
});
