import { activate } from './app.js';
import { listeningApp } from './listening-app.js';
import type { Tap } from './tap.js';

/**
 * For areas whose answers are result URLs (image, PDF): a listening gateway (so the URLs work
 * with fetch), an activated account, and what their tests check after a call: the balance and
 * how many results the account has stored.
 */
export async function resultAreaApp(t: Tap, overrides: Record<string, any> = {}) {
  const { app, base } = await listeningApp(t, overrides);
  const a = await activate(app);
  const post = (url: string, payload: unknown, auth = a.auth) =>
    app.inject({ method: 'POST', url, headers: auth, payload: payload as any });
  const balance = () => app.svc.wallet.balance(a.account_id);
  const results = async (accountId = a.account_id) =>
    Number(
      (
        await app.svc.db
          .selectFrom('results')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow()
      ).n
    );
  return { app, base, ...a, post, balance, results };
}
