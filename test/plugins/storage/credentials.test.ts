import t from 'tap';
import { makeApp } from '../../helpers/app.js';
import { CredentialStore } from '../../../plugins/storage/credentials.js';

t.test('the internal credential is read once an account, then served from memory', async (t) => {
  const { app } = await makeApp(t);
  const store = new CredentialStore(app.svc.db, app.svc.masterKey);
  const first = await store.internal('acct_a');
  const rows = () =>
    app.svc.db.selectFrom('storage_credentials').select('access_key_id').where('account_id', '=', 'acct_a').execute();
  t.equal((await rows()).length, 1, 'made on first use');
  // Gone from the table: a second call that still read it would make a new one.
  await app.svc.db.deleteFrom('storage_credentials').where('account_id', '=', 'acct_a').execute();
  t.same(await store.internal('acct_a'), first, 'the same credential, secret included');
  t.equal((await rows()).length, 0, 'no second read, so no second credential');
  const other = await store.internal('acct_b');
  t.not(other.accessKeyId, first.accessKeyId, 'another account has its own');
  t.equal(other.accountId, 'acct_b');
});
