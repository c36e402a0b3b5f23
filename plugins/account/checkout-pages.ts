import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isApiError, iso, microsToUsd, type Svc } from '../../core/kit/area.js';
import { amountPage, checkoutPage, messagePage, resultPage, sendHtml } from './checkout-html.js';
import { checkCents, createTopup, findBySession, settleTopup, type TopupRow } from './topup-service.js';

// The hosted pages a browser opens: the sandbox vendor's checkout (Pay / Cancel) and the
// "add funds" page behind ActivateResult.checkout_url. No key: the unguessable session id,
// or the signed page token, is the capability. Actions are POSTs to the same capability
// URL, so a cross-site form cannot act on a session it does not already know.

const SESSION = /^cs_sandbox_[0-9A-Za-z]{24}$/;
const SANDBOX_ADAPTER = 'sandbox-payments';
const HIDE = { hide: true } as any;

type SessionReq = FastifyRequest<{ Params: { session_id: string } }>;
type TokenReq = FastifyRequest<{ Params: { '*': string }; Body: Record<string, string> | undefined }>;

/** A checkout on this gateway is linked by path, so it works whatever host the browser used. */
function sameOrigin(svc: Svc, url: string): string {
  const base = svc.config.server.public_url;
  return url.startsWith(`${base}/`) ? url.slice(base.length) : url;
}

async function sandboxTopup(svc: Svc, sessionId: string): Promise<TopupRow | undefined> {
  if (!SESSION.test(sessionId)) return undefined;
  const t = await findBySession(svc, sessionId);
  // Only sessions the sandbox vendor opened: a session of a real payments vendor is paid there.
  return t && svc.vendors.get(t.vendor)?.adapter === SANDBOX_ADAPTER ? t : undefined;
}

const notFound = (reply: FastifyReply) =>
  sendHtml(reply, 404, messagePage('Checkout not found', 'There is no checkout at this address.'));

function view(svc: Svc, t: TopupRow) {
  return {
    topupId: t.topup_id,
    amountUsd: microsToUsd(t.amount_micros),
    currency: svc.config.wallet.currency,
    state: t.state,
  };
}

async function finish(svc: Svc, reply: FastifyReply, sessionId: string, target: 'succeeded' | 'canceled') {
  const { topup } = await settleTopup(svc, sessionId, target);
  if (!topup) return notFound(reply);
  // Paying or canceling again answers like the first time; the wallet moved only once.
  if (topup.state !== target) return sendHtml(reply, 409, resultPage(view(svc, topup)));
  if (topup.return_url) {
    const back = new URL(topup.return_url);
    back.searchParams.set('topup_id', topup.topup_id);
    back.searchParams.set('state', topup.state);
    return reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .redirect(back.toString(), 303);
  }
  return sendHtml(reply, 200, resultPage(view(svc, topup)));
}

function registerSandboxCheckout(app: FastifyInstance): void {
  const svc = app.svc;
  app.get(
    '/sandbox/checkout/:session_id',
    { config: { auth: 'none' }, schema: HIDE },
    async (req: SessionReq, reply) => {
      const t = await sandboxTopup(svc, req.params.session_id);
      if (!t) return notFound(reply);
      if (t.state !== 'pending') return sendHtml(reply, 200, resultPage(view(svc, t)));
      return sendHtml(
        reply,
        200,
        checkoutPage({
          sessionId: t.session_id,
          topupId: t.topup_id,
          amountUsd: microsToUsd(t.amount_micros),
          currency: svc.config.wallet.currency,
          expiresAt: iso(t.expires_at),
        })
      );
    }
  );
  for (const [action, target] of [
    ['pay', 'succeeded'],
    ['cancel', 'canceled'],
  ] as const) {
    app.post(
      `/sandbox/checkout/:session_id/${action}`,
      { config: { auth: 'none' }, schema: HIDE },
      async (req: SessionReq, reply) => {
        if (!(await sandboxTopup(svc, req.params.session_id))) return notFound(reply);
        return finish(svc, reply, req.params.session_id, target);
      }
    );
  }
}

async function pageAccount(svc: Svc, token: string, reply: FastifyReply) {
  let accountId: string;
  try {
    accountId = svc.tokens.verify<{ acct: string }>('topup-page', token).acct;
  } catch {
    sendHtml(
      reply,
      401,
      messagePage(
        'Link not valid',
        'This add-funds link is not valid or has expired. POST /v1/activate with your key returns a fresh one.'
      )
    );
    return undefined;
  }
  const a = await svc.db
    .selectFrom('accounts')
    .select(['account_id', 'status', 'region'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!a) {
    sendHtml(reply, 404, messagePage('Account not found', 'The account of this link does not exist.'));
    return undefined;
  }
  if (a.status !== 'active') {
    sendHtml(reply, 403, messagePage('Account suspended', 'This account is suspended; it cannot be topped up.'));
    return undefined;
  }
  return a as { account_id: string; region: string };
}

function registerTopupPage(app: FastifyInstance): void {
  const svc = app.svc;
  const { topup_min_usd: min, topup_max_usd: max, currency } = svc.config.wallet;
  const form = (token: string, value?: string, error?: string) =>
    amountPage({ action: `/checkout/topup/${encodeURIComponent(token)}`, min, max, currency, value, error });

  // A wildcard, not `:token`: signed tokens are longer than the router's 100-character cap on a path parameter.
  app.get('/checkout/topup/*', { config: { auth: 'none' }, schema: HIDE }, async (req: TokenReq, reply) => {
    if (!(await pageAccount(svc, req.params['*'], reply))) return reply;
    return sendHtml(reply, 200, form(req.params['*']));
  });

  app.post('/checkout/topup/*', { config: { auth: 'none' }, schema: HIDE }, async (req: TokenReq, reply) => {
    const account = await pageAccount(svc, req.params['*'], reply);
    if (!account) return reply;
    const raw = typeof req.body?.amount_usd === 'string' ? req.body.amount_usd.trim() : '';
    const amount = /^\d+(\.\d{1,2})?$/.test(raw) ? Number(raw) : NaN;
    if (!(amount >= min && amount <= max)) {
      return sendHtml(
        reply,
        400,
        form(req.params['*'], raw, `Enter an amount from ${min} to ${max} ${currency}, with at most two decimals.`)
      );
    }
    try {
      checkCents(amount);
      const t = await createTopup(svc, { accountId: account.account_id, region: account.region, amountUsd: amount });
      return reply.header('cache-control', 'no-store').redirect(sameOrigin(svc, t.checkout_url), 303);
    } catch (e) {
      if (!isApiError(e)) throw e;
      return sendHtml(reply, e.status, messagePage('Top-up not possible', e.message));
    }
  });
}

/** The hosted pages, in their own scope so the form-body parser stays theirs. */
export function registerCheckoutPages(app: FastifyInstance): void {
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    registerSandboxCheckout(scope);
    registerTopupPage(scope);
  });
}
