import t from 'tap';
import { aiApp } from '../../plugins/ai/setup.js';
import { imageApp } from '../../plugins/image/setup.js';
import { solidPng } from '../../fakes/test-images.js';
import { checkChargedOnce } from '../../helpers/exactly-once.js';
import { failStoringAnswers } from '../../helpers/answer-fault.js';

// Issue 27: a metered call's charge and its idempotent answer commit together (Meter.charges,
// written in the answer's transaction), so a failure between them leaves neither and the
// retry charges once. On every area through the router: a chat and an image call here.

t.test('POST /v1/ai/chat: charged once with its answer', async (t) => {
  const { app, auth, accountId } = await aiApp(t);
  await checkChargedOnce(
    t,
    app,
    accountId,
    (key) => ({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: { ...auth, 'idempotency-key': key },
      payload: { messages: 'hello', model: 'alpha' },
    }),
    (b) => ({ ...b, metadata: { ...b.metadata, latency_ms: 0 } })
  );
  await t.test('a stream already sent is charged even when its answer cannot be stored', async (t) => {
    const usage = () =>
      app.svc.db
        .selectFrom('wallet_ledger')
        .select('amount_micros')
        .where('account_id', '=', accountId)
        .where('kind', '=', 'usage')
        .execute();
    const before = (await usage()).length;
    const undo = await failStoringAnswers(app);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/chat',
      headers: { ...auth, 'idempotency-key': 'streamed-1' },
      payload: { messages: 'hello', model: 'alpha', stream: true },
    });
    await undo();
    t.equal(res.statusCode, 200);
    t.match(res.body, /fake-openai\./, 'the answer reached the caller');
    t.equal((await usage()).length, before + 1, 'charged once');
    const claim = await app.svc.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', '=', 'streamed-1')
      .executeTakeFirst();
    t.notOk(claim, 'the key is free again');
  });
});

t.test('POST /v1/image/process: charged once with its answer', async (t) => {
  const { app, auth, account_id } = await imageApp(t);
  const input = { base64: (await solidPng(20, 10, '#00ff00')).toString('base64') };
  await checkChargedOnce(t, app, account_id, (key) => ({
    method: 'POST',
    url: '/v1/image/process',
    headers: auth,
    payload: { input, width: 10, format: 'png', idempotency_key: key },
  }));
});
