import type { FastifyReply } from 'fastify';

// The hosted pages are plain HTML forms: no script, no external assets, every interpolated
// value escaped. They are served with headers that keep them out of frames (a Pay button
// must not be clickjacked), out of caches and out of Referer headers (the URL is the secret).

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(v: unknown): string {
  return String(v).replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
.amount{font-size:2rem;font-weight:600;margin:1rem 0}
form{display:inline-block;margin:0 .5rem 0 0}
button{font-size:1rem;padding:.5rem 1.25rem;cursor:pointer}
.note{color:#666;font-size:.875rem}.error{color:#a00}
</style>
</head>
<body>
<h1>${esc(title)}</h1>
${body}
</body>
</html>
`;
}

export function sendHtml(reply: FastifyReply, status: number, html: string) {
  return reply
    .code(status)
    .header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
    )
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(html);
}

const money = (usd: number, currency: string) => `${usd.toFixed(2)} ${currency}`;

export function checkoutPage(v: {
  sessionId: string;
  topupId: string;
  amountUsd: number;
  currency: string;
  expiresAt: string;
}): string {
  const base = `/sandbox/checkout/${encodeURIComponent(v.sessionId)}`;
  return layout(
    'Sandbox checkout',
    `
<p>Wallet top-up <code>${esc(v.topupId)}</code></p>
<p class="amount">${esc(money(v.amountUsd, v.currency))}</p>
<form method="post" action="${esc(`${base}/pay`)}"><button type="submit" name="action" value="pay">Pay</button></form>
<form method="post" action="${esc(`${base}/cancel`)}"><button type="submit" name="action" value="cancel">Cancel</button></form>
<p class="note">This is the gateway's sandbox payments vendor: no card is asked for and no money moves. Pay credits the wallet at once. The checkout expires at ${esc(v.expiresAt)}.</p>`
  );
}

const OUTCOME: Record<string, string> = {
  succeeded: 'Payment succeeded. The wallet has been credited.',
  canceled: 'The top-up was canceled. Nothing was charged.',
  expired: 'This checkout has expired. Start a new top-up.',
  failed: 'The payment failed. Nothing was charged.',
  pending: 'The top-up is still pending.',
};

export function resultPage(v: { topupId: string; amountUsd: number; currency: string; state: string }): string {
  return layout(
    `Top-up ${v.state}`,
    `
<p>Wallet top-up <code>${esc(v.topupId)}</code> of ${esc(money(v.amountUsd, v.currency))}</p>
<p>${esc(OUTCOME[v.state] ?? v.state)}</p>`
  );
}

export function messagePage(title: string, text: string): string {
  return layout(title, `<p>${esc(text)}</p>`);
}

export function amountPage(v: {
  action: string;
  min: number;
  max: number;
  currency: string;
  value?: string;
  error?: string;
}): string {
  return layout(
    'Add funds',
    `
${v.error ? `<p class="error">${esc(v.error)}</p>` : ''}
<form method="post" action="${esc(v.action)}">
<label>Amount (${esc(v.currency)}, ${esc(v.min)} to ${esc(v.max)})
<input type="number" name="amount_usd" min="${esc(v.min)}" max="${esc(v.max)}" step="0.01" required value="${esc(v.value ?? '')}"></label>
<button type="submit">Continue to checkout</button>
</form>`
  );
}
