import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import type { Tap } from '../../helpers/tap.js';

/** A listening gateway (result URLs work with fetch) and an activated account. */
export async function imageApp(t: Tap, overrides: Record<string, any> = {}) {
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

/** A loopback HTTP server that answers every GET with `body` as `type`. */
export async function serveBytes(t: Tap, body: Buffer, type = 'image/png'): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': type }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/image`;
}
