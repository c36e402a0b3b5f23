import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { smsApp, post, get, untilState, outboxCount } from './sms-app.js';

// The SMS area on a laptop: the embedded sms-capture sink keeps each message as a file that
// GET /v1/sms/{id}/captured reads; records, lists, bad input and another account's ids.

t.test('SMS on the capture sink', async (t) => {
  const { app, a, b, dir } = await smsApp(t);

  t.test('a send is answered queued, then captured; the kept copy reads back', async (t) => {
    const res = await post(app, a, '/v1/sms/send', { to: '+14155550100', body: 'Hello €uro', from: 'Acme' });
    t.equal(res.statusCode, 200, res.body);
    const r = res.json();
    t.match(r, { sms_id: /^sms_/, to: '+14155550100', from: 'Acme', state: 'queued', segments: 1, encoding: 'GSM-7' });
    const sent = await untilState(app, a, r.sms_id, 'sent');
    t.match(sent, { vendor: 'sms-capture', captured: true, cost_usd: 0, error: null });
    t.ok(existsSync(join(dir, 'sms-capture', `${r.sms_id}.json`)), 'kept under the data dir, named by the id');
    const kept = (await get(app, a, `/v1/sms/${r.sms_id}/captured`)).json();
    t.match(kept, { sms_id: r.sms_id, to: '+14155550100', from: 'Acme', body: 'Hello €uro', segments: 1 });
    t.equal((await get(app, b, `/v1/sms/${r.sms_id}/captured`)).statusCode, 404, "another account's copy is 404");
  });

  t.test('segments as carriers count them, UCS-2 as soon as one character needs it', async (t) => {
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: `${'a'.repeat(70)}ж` })).json();
    t.match(r, { segments: 2, encoding: 'UCS-2' });
    const long = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: 'a'.repeat(1600) })).json();
    t.match(long, { segments: 11, encoding: 'GSM-7' });
  });

  t.test("get and list are per account; another account's id is 404", async (t) => {
    const r = (await post(app, b, '/v1/sms/send', { to: '+442071838750', body: 'b only' })).json();
    t.equal((await get(app, a, `/v1/sms/${r.sms_id}`)).statusCode, 404);
    t.equal((await get(app, a, '/v1/sms/sms_doesnotexist')).json().error.code, 'not_found');
    await untilState(app, b, r.sms_id, 'sent');
    const listB = (await get(app, b, '/v1/sms')).json();
    t.same(
      listB.items.map((x: any) => x.sms_id),
      [r.sms_id]
    );
    const page = (await get(app, a, '/v1/sms?limit=2')).json();
    t.equal(page.items.length, 2);
    t.ok(page.next_cursor);
    const rest = (await get(app, a, `/v1/sms?limit=200&cursor=${encodeURIComponent(page.next_cursor)}`)).json();
    t.equal(rest.next_cursor, null);
    t.equal(page.items.length + rest.items.length, 3, "a's three messages, newest first, in two pages");
    t.ok(page.items[0].created_at >= page.items[1].created_at);
    const failed = (await get(app, a, '/v1/sms?state=failed')).json();
    t.same(failed.items, []);
    t.equal((await get(app, a, '/v1/sms?state=bogus')).statusCode, 400);
  });

  t.test('bad input: 4xx, nothing queued', async (t) => {
    const before = await outboxCount(app);
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ to: '4155550100', body: 'x' }, 400, 'validation_failed'],
      [{ to: '+1415555', body: 'x' }, 400, 'validation_failed'],
      [{ to: '+10005550100', body: 'x' }, 400, 'validation_failed'],
      [{ to: '+14155550100', body: 'a'.repeat(1601) }, 400, 'validation_failed'],
      [{ to: '+14155550100', body: '' }, 400, 'validation_failed'],
      [{ to: '+14155550100' }, 400, 'validation_failed'],
      [{ to: '+14155550100', template_id: 'tpl_1' }, 422, 'unprocessable'],
      [{ to: '+14155550100', body: 'x', extra: 1 }, 400, 'validation_failed'],
      [{ to: '+14155550100', body: 'x', vendor: 'nope' }, 503, 'no_vendor_available'],
    ];
    for (const [payload, status, code] of cases) {
      const res = await post(app, a, '/v1/sms/send', payload);
      t.equal(res.statusCode, status, JSON.stringify(payload).slice(0, 80));
      t.equal(res.json().error.code, code);
    }
    t.equal(await outboxCount(app), before, 'nothing queued');
  });

  t.test('an idempotency key replays the first answer and sends once', async (t) => {
    const before = await outboxCount(app);
    const body = { to: '+14155550100', body: 'once', idempotency_key: 'k-1' };
    const first = await post(app, a, '/v1/sms/send', body);
    const again = await post(app, a, '/v1/sms/send', body);
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.equal(again.json().sms_id, first.json().sms_id);
    t.equal(await outboxCount(app), before + 1);
  });
});
