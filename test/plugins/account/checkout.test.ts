import t from 'tap';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { fetch } from 'undici';
import { makeApp, activate } from '../../helpers/app.js';

/** Listen on a free loopback port and return the base URL the browser-side client uses. */
async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** A URL the gateway handed out (on its configured public_url), re-based on the test's port. */
function onBase(base: string, url: string): string {
  const u = new URL(url);
  return `${base}${u.pathname}${u.search}`;
}

/** The form actions of a page, in document order, with the label of each form's button. */
function forms(html: string): { action: string; button: string }[] {
  const out: { action: string; button: string }[] = [];
  for (const m of html.matchAll(/<form[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)) {
    const button = /<button[^>]*>([^<]*)<\/button>/.exec(m[2])?.[1] ?? '';
    out.push({ action: m[1].replace(/&amp;/g, '&'), button });
  }
  return out;
}

async function balance(base: string, key: string): Promise<number> {
  const res = await fetch(`${base}/v1/account/balance`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { balance_usd: number }).balance_usd;
}

/** Open a checkout page and press one of its buttons, as a browser would (form POST). */
async function press(base: string, checkoutUrl: string, label: 'Pay' | 'Cancel') {
  const page = await fetch(onBase(base, checkoutUrl));
  const html = await page.text();
  const form = forms(html).find((f) => f.button === label);
  if (!form) throw new Error(`no ${label} button on ${checkoutUrl}: ${html}`);
  const action = new URL(form.action, onBase(base, checkoutUrl)).toString();
  return fetch(action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `action=${label.toLowerCase()}`,
    redirect: 'manual',
  });
}

async function createTopup(base: string, key: string, body: Record<string, unknown>) {
  const res = await fetch(`${base}/v1/account/topup`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('pay through the hosted sandbox checkout credits the wallet once', async (t) => {
  const { app } = await makeApp(t);
  const base = await listen(app);
  const a = await activate(app);
  t.equal(await balance(base, a.key), 5);

  const { status, body: top } = await createTopup(base, a.key, { amount_usd: 20 });
  t.equal(status, 200);
  t.match(top.topup_id, /^top_/);
  t.equal(top.state, 'pending');
  t.equal(top.amount_usd, 20);
  t.equal(top.next_action_url, top.checkout_url);
  t.match(top.checkout_url, /\/sandbox\/checkout\/cs_sandbox_[0-9A-Za-z]{24}$/);
  t.ok(Date.parse(top.expires_at) > Date.parse(top.created_at));

  const page = await fetch(onBase(base, top.checkout_url));
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  const html = await page.text();
  t.match(html, /20\.00 USD/);
  t.same(
    forms(html).map((f) => f.button),
    ['Pay', 'Cancel']
  );
  t.notMatch(html, /<script/i);

  const paid = await press(base, top.checkout_url, 'Pay');
  t.equal(paid.status, 200);
  t.match(await paid.text(), /Payment succeeded/);
  t.equal(await balance(base, a.key), 25);

  // Paying again (a double click, a replayed form) answers the same and credits nothing.
  const again = await fetch(`${onBase(base, top.checkout_url)}/pay`, { method: 'POST' });
  t.equal(again.status, 200);
  t.equal(await balance(base, a.key), 25);

  const rec = await fetch(`${base}/v1/account/topups/${top.topup_id}`, { headers: a.auth });
  const r = (await rec.json()) as any;
  t.equal(r.state, 'succeeded');
  t.notOk('next_action_url' in r, 'no next action once final');
  t.ok(r.completed_at);
  const ledger = await app.svc.db
    .selectFrom('wallet_ledger')
    .selectAll()
    .where('account_id', '=', a.account_id)
    .where('kind', '=', 'topup')
    .execute();
  t.equal(ledger.length, 1);
  t.equal(Number(ledger[0].amount_micros), 20_000_000);
  t.equal(ledger[0].ref, top.topup_id);

  // After success, cancel is not possible.
  const cancel = await fetch(`${onBase(base, top.checkout_url)}/cancel`, { method: 'POST' });
  t.equal(cancel.status, 409);
  t.equal(await balance(base, a.key), 25);
});

t.test('20 concurrent Pay posts credit exactly once', async (t) => {
  const { app } = await makeApp(t);
  const base = await listen(app);
  const a = await activate(app);
  const { body: top } = await createTopup(base, a.key, { amount_usd: 7.5 });
  const payUrl = `${onBase(base, top.checkout_url)}/pay`;
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      fetch(payUrl, { method: 'POST' }).then(async (r) => (await r.arrayBuffer(), r.status))
    )
  );
  t.same([...new Set(results)], [200], 'every post sees the success');
  t.equal(await balance(base, a.key), 12.5);
  const ledger = await app.svc.db
    .selectFrom('wallet_ledger')
    .select('entry_id')
    .where('account_id', '=', a.account_id)
    .where('kind', '=', 'topup')
    .execute();
  t.equal(ledger.length, 1);
});

t.test('cancel, return_url redirect, and an expired checkout that cannot be paid', async (t) => {
  const { app } = await makeApp(t);
  const base = await listen(app);
  const a = await activate(app);

  const { body: c } = await createTopup(base, a.key, { amount_usd: 10, return_url: 'https://shop.example/done?x=1' });
  const canceled = await press(base, c.checkout_url, 'Cancel');
  t.equal(canceled.status, 303);
  const loc = new URL(canceled.headers.get('location')!);
  t.equal(loc.origin + loc.pathname, 'https://shop.example/done');
  t.equal(loc.searchParams.get('x'), '1');
  t.equal(loc.searchParams.get('topup_id'), c.topup_id);
  t.equal(loc.searchParams.get('state'), 'canceled');
  const payAfterCancel = await fetch(`${onBase(base, c.checkout_url)}/pay`, { method: 'POST', redirect: 'manual' });
  t.equal(payAfterCancel.status, 409);
  t.equal(await balance(base, a.key), 5);

  const { body: p } = await createTopup(base, a.key, { amount_usd: 6, return_url: 'http://127.0.0.1:1/back' });
  const paid = await press(base, p.checkout_url, 'Pay');
  t.equal(paid.status, 303);
  t.equal(new URL(paid.headers.get('location')!).searchParams.get('state'), 'succeeded');
  t.equal(await balance(base, a.key), 11);

  const { body: e } = await createTopup(base, a.key, { amount_usd: 50 });
  // The clock cannot be moved in a live process: age the record past its expiry instead.
  await app.svc.db
    .updateTable('topups')
    .set({ expires_at: Date.now() - 1 })
    .where('topup_id', '=', e.topup_id)
    .execute();
  const page = await fetch(onBase(base, e.checkout_url));
  const html = await page.text();
  t.match(html, /expired/);
  t.same(forms(html), [], 'no Pay button on an expired checkout');
  const late = await fetch(`${onBase(base, e.checkout_url)}/pay`, { method: 'POST' });
  t.equal(late.status, 409);
  t.equal(await balance(base, a.key), 11);
  const rec = (await (await fetch(`${base}/v1/account/topups/${e.topup_id}`, { headers: a.auth })).json()) as any;
  t.equal(rec.state, 'expired');
});

t.test('an unknown or malformed session is 404, and no key is needed for the page', async (t) => {
  const { app } = await makeApp(t);
  const base = await listen(app);
  for (const id of ['cs_sandbox_AAAAAAAAAAAAAAAAAAAAAAAA', 'nope', '%3Cscript%3E']) {
    const res = await fetch(`${base}/sandbox/checkout/${id}`);
    t.equal(res.status, 404, id);
    t.notMatch(await res.text(), /<script>/);
    const pay = await fetch(`${base}/sandbox/checkout/${id}/pay`, { method: 'POST' });
    t.equal(pay.status, 404, id);
  }
});

t.test(
  'the add-funds page behind ActivateResult.checkout_url creates a top-up and leads to the checkout',
  async (t) => {
    const { app } = await makeApp(t);
    const base = await listen(app);
    const res = await fetch(`${base}/v1/activate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const act = (await res.json()) as any;
    const pageUrl = onBase(base, act.checkout_url);
    const page = await fetch(pageUrl);
    t.equal(page.status, 200);
    const [form] = forms(await page.text());
    t.ok(form, 'the page has a form');
    const action = new URL(form.action, pageUrl).toString();

    // A bad amount re-renders the form with the input escaped, and creates nothing.
    const bad = await fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ amount_usd: '"><script>x</script>' }).toString(),
    });
    t.equal(bad.status, 400);
    const badHtml = await bad.text();
    t.notMatch(badHtml, /<script>x/);
    t.match(badHtml, /&quot;&gt;&lt;script&gt;/);
    for (const amount of ['4.99', '10000.01', '5.001', '']) {
      const r = await fetch(action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `amount_usd=${amount}`,
      });
      t.equal(r.status, 400, amount);
      await r.arrayBuffer();
    }
    t.equal((await app.svc.db.selectFrom('topups').select('topup_id').execute()).length, 0);

    const created = await fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'amount_usd=15',
      redirect: 'manual',
    });
    t.equal(created.status, 303);
    const checkout = new URL(created.headers.get('location')!, action).toString();
    t.match(checkout, /\/sandbox\/checkout\/cs_sandbox_/);
    const paid = await press(base, checkout, 'Pay');
    t.equal(paid.status, 200);
    await paid.arrayBuffer();
    t.equal(await balance(base, act.primary_api_key), 20);

    const list = (await (
      await fetch(`${base}/v1/account/topups`, { headers: { authorization: `Bearer ${act.primary_api_key}` } })
    ).json()) as any;
    t.equal(list.items.length, 1);
    t.equal(list.items[0].state, 'succeeded');
    t.equal(list.items[0].amount_usd, 15);

    const tampered = await fetch(pageUrl.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')));
    t.equal(tampered.status, 401);
    await tampered.arrayBuffer();
  }
);
