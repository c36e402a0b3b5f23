import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { fetch } from 'undici';

/** Listen on a free loopback port and return the base URL the browser-side client uses. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** A URL the gateway handed out (on its configured public_url), re-based on the test's port. */
export function onBase(base: string, url: string): string {
  const u = new URL(url);
  return `${base}${u.pathname}${u.search}`;
}

/** The form actions of a page, in document order, with the label of each form's button. */
export function forms(html: string): { action: string; button: string }[] {
  const out: { action: string; button: string }[] = [];
  for (const m of html.matchAll(/<form[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)) {
    const button = /<button[^>]*>([^<]*)<\/button>/.exec(m[2])?.[1] ?? '';
    out.push({ action: m[1].replace(/&amp;/g, '&'), button });
  }
  return out;
}

export async function balance(base: string, key: string): Promise<number> {
  const res = await fetch(`${base}/v1/account/balance`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { balance_usd: number }).balance_usd;
}

/** Open a checkout page and press one of its buttons, as a browser would (form POST). */
export async function press(base: string, checkoutUrl: string, label: 'Pay' | 'Cancel') {
  const page = await fetch(onBase(base, checkoutUrl));
  const html = await page.text();
  const form = forms(html).find((f) => f.button === label);
  if (!form) throw new Error(`no ${label} button on ${checkoutUrl}: ${html}`);
  const action = new URL(form.action, onBase(base, checkoutUrl)).toString();
  return fetch(action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `action=${label.toLowerCase()}`, redirect: 'manual' });
}

export async function createTopup(base: string, key: string, body: Record<string, unknown>) {
  const res = await fetch(`${base}/v1/account/topup`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}
