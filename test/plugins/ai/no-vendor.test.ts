import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

// database-independent: 503 before any charge; no row is written.

t.test('with no AI vendor configured: 503 no_vendor_available, nothing charged, discovery says so', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const res = await app.inject({ method: 'POST', url: '/v1/ai/chat', headers: a.auth, payload: { messages: 'hello' } });
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'no_vendor_available');
  t.match(res.json().error.message, /vendors:|POST \/v1\/byok/);
  const bal = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(bal.json().balance_usd, 5);
  const disc = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json();
  const chat = disc.items.find(
    (i: { path: string; method: string }) => i.path === '/v1/ai/chat' && i.method === 'POST'
  );
  t.ok(chat, 'chat is listed');
  t.equal(chat.available, false, 'BYOK-only instances do not make it available');
  t.notOk(app.svc.router.available('ai.chat'));
  t.ok(
    app.svc.vendors.all().some((v) => v.id === 'byok-openai' && v.byokOnly),
    'a BYOK-only openai instance waits for callers with keys'
  );
});
