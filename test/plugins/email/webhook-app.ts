import { activate, makeApp } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import type { Tap } from '../../helpers/tap.js';

// A gateway sending email through one vendor instance (a fake's), for the tests that post that
// vendor's signed events to POST /v1/email/webhooks/{instance}: send, wait, post, read back.

export const PUBLIC = 'https://gw.example.com';

export async function webhookApp(t: Tap, vendor: Record<string, unknown>) {
  const { app } = await makeApp(t, {
    server: { public_url: PUBLIC },
    jobs: { poll_ms: 20 },
    plugins: { email: { default_from: 'News <news@mail.example>' } },
    vendors: [vendor],
  });
  const a = await activate(app);
  const get = async (url: string) => (await app.inject({ method: 'GET', url, headers: a.auth })).json();
  /** Send to `to` and wait for the vendor to take it: the record once `sent`. */
  const sent = async (to: string[]) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/email/send',
      headers: a.auth,
      payload: { to, subject: 'hi', text: 'x' },
    });
    if (res.statusCode !== 200) throw new Error(`send: ${res.statusCode} ${res.body}`);
    const id = res.json().id;
    await until(`email ${id} sent`, async () => (await get(`/v1/email/${id}`)).state !== 'queued');
    return get(`/v1/email/${id}`);
  };
  /** A vendor's post to the webhook route of instance `id`, exactly as it was signed. */
  const post = (id: string, p: { body: string; headers: Record<string, string> }) =>
    app.inject({ method: 'POST', url: `/v1/email/webhooks/${id}`, headers: p.headers, payload: p.body });
  /** The account's suppression list as `email: reason`. */
  const suppressed = async () =>
    Object.fromEntries(((await get('/v1/email/suppress')).items as any[]).map((i) => [i.email, i.reason]));
  return { app, a, get, sent, post, suppressed };
}
