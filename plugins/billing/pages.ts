import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Svc } from '../../core/kit/area.js';
import type { ChargeRow, Charges } from './charges.js';
import { formatAmount } from './currencies.js';

// The pages a payer's browser opens: the sandbox processor's authentication page (its stand-in
// for a bank's 3-D Secure page) and the default return page after it. No key: the unguessable
// payment reference in the path is the capability, and the actions are POSTs to it, so a
// cross-site form cannot act on a payment it does not already know.

const SANDBOX_ADAPTER = 'sandbox-payments';
const REF = /^pi_sandbox_[0-9A-Za-z]{24}$/;
const HIDE = { hide: true } as any;
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

const escapeHtml = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(reply: FastifyReply, status: number, title: string, inner: string) {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:30rem;margin:3rem auto;padding:0 1rem}form{display:inline}</style>
</head><body><h1>${escapeHtml(title)}</h1>${inner}</body></html>\n`;
  return reply
    .code(status)
    .headers({
      'content-security-policy': CSP,
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    })
    .type('text/html; charset=utf-8')
    .send(html);
}

type RefReq = FastifyRequest<{ Params: { ref: string } }>;

async function sandboxCharge(svc: Svc, charges: Charges, ref: string): Promise<ChargeRow | undefined> {
  if (!REF.test(ref)) return undefined;
  for (const inst of svc.vendors.all()) {
    if (inst.adapter !== SANDBOX_ADAPTER) continue;
    const c = await charges.findByVendorRef(inst.id, ref);
    if (c) return c;
  }
  return undefined;
}

function describe(c: ChargeRow): string {
  return `<p>Charge <code>${escapeHtml(c.charge_id)}</code>: <b>${escapeHtml(formatAmount(c.amount, c.currency))} ${escapeHtml(c.currency)}</b></p>`;
}

function afterwards(reply: FastifyReply, c: ChargeRow) {
  return page(reply, 200, `Payment ${c.state}`, `${describe(c)}<p>You can close this window.</p>`);
}

export function registerBillingPages(app: FastifyInstance, charges: Charges): void {
  const svc = app.svc;
  const notFound = (reply: FastifyReply) =>
    page(reply, 404, 'Payment not found', '<p>There is no payment at this address.</p>');

  app.get(
    '/sandbox/payments/:ref/authenticate',
    { config: { auth: 'none' }, schema: HIDE },
    async (req: RefReq, reply) => {
      const c = await sandboxCharge(svc, charges, req.params.ref);
      if (!c) return notFound(reply);
      if (c.state !== 'requires_action') return afterwards(reply, c);
      const base = `/sandbox/payments/${encodeURIComponent(req.params.ref)}`;
      return page(
        reply,
        200,
        'Authenticate this payment',
        `${describe(c)}
<form method="post" action="${escapeHtml(`${base}/complete`)}"><button>Complete authentication</button></form>
<form method="post" action="${escapeHtml(`${base}/fail`)}"><button>Fail authentication</button></form>
<p>The gateway's sandbox processor: no bank is asked and no money moves.</p>`
      );
    }
  );

  for (const [action, out] of [
    ['complete', { state: 'succeeded' }],
    [
      'fail',
      {
        state: 'failed',
        failure_code: 'authentication_failed',
        failure_message: 'The payer did not complete authentication.',
      },
    ],
  ] as const) {
    app.post(
      `/sandbox/payments/:ref/${action}`,
      { config: { auth: 'none' }, schema: HIDE },
      async (req: RefReq, reply) => {
        const c = await sandboxCharge(svc, charges, req.params.ref);
        if (!c) return notFound(reply);
        if (c.state !== 'requires_action') return page(reply, 409, `Payment ${c.state}`, describe(c));
        const moved = (await charges.move(c, { vendor_ref: c.vendor_ref, ...out })) ?? c;
        return afterwards(reply, moved);
      }
    );
  }

  // The default return_url: where the payer lands after authenticating when the caller named none.
  // It says nothing of the charge (a charge id is no credential); the caller's own page would.
  app.get('/billing/return/:ref', { config: { auth: 'none' }, schema: HIDE }, async (_req: RefReq, reply) =>
    page(reply, 200, 'Payment authenticated', '<p>You can close this window and return to the merchant.</p>')
  );
}
