import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

t.test('webhook signing secrets are sealed in the database and readable through the API', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const shown = (await app.inject({ method: 'GET', url: '/v1/scheduling/webhook/secret', headers: a.auth })).json();
  t.match(shown.secret, /^whsec_/);
  const rotated = (
    await app.inject({ method: 'POST', url: '/v1/scheduling/webhook/secret/rotate', headers: a.auth, payload: {} })
  ).json();
  t.match(rotated.secret, /^whsec_/);
  t.not(rotated.secret, shown.secret);
  const rows = await app.svc.db
    .selectFrom('webhook_secrets')
    .select(['secret'])
    .where('account_id', '=', a.account_id)
    .execute();
  t.equal(rows.length, 2);
  for (const r of rows) {
    t.notOk(String(r.secret).includes('whsec_'), 'no secret in clear');
    t.notOk(
      [shown.secret, rotated.secret].some((s: string) => String(r.secret).includes(s.slice(6))),
      'not even its key part'
    );
  }
  const again = (await app.inject({ method: 'GET', url: '/v1/scheduling/webhook/secret', headers: a.auth })).json();
  t.equal(again.secret, rotated.secret, 'the current secret reads back after sealing');
});
