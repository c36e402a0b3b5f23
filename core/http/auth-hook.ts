import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../errors.js';
import { noRoute } from './error-handler.js';
import { scopeAllows } from '../auth/scopes.js';
import { KEY_PREFIX, type Principal } from '../auth/keys.js';
import type { RateDecision } from './rate-limit.js';

/** The key from `Authorization: Bearer …` or `x-api-key`. */
export function presentedKey(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (h) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
    return m ? m[1] : undefined;
  }
  const x = req.headers['x-api-key'];
  return typeof x === 'string' && x ? x.trim() : undefined;
}

function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

function setRateHeaders(reply: FastifyReply, d: RateDecision) {
  reply.header('ratelimit-limit', d.limit);
  reply.header('ratelimit-remaining', d.remaining);
  reply.header('ratelimit-reset', d.resetSeconds);
  reply.header('ratelimit-policy', d.policy);
}

type Done = (err?: Error) => void;

/**
 * Fastify catches what a callback hook throws synchronously, not what throws in a promise's
 * continuation: there it would be an unhandled rejection and the request would hang.
 */
function guarded(done: Done, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    done(e as Error);
  }
}

/**
 * Authenticates every route by its `config.auth` (default: a project key for /v1 paths),
 * checks the scope, and spends one token of the key's rate bucket.
 *
 * The hook is attached to each route that needs it when the route is added, with the
 * route's mode and scope already known; routes without auth carry no hook at all. It takes
 * a callback rather than returning a promise, and a cached key with the in-memory rate
 * limiter finishes without a promise or a database read: this runs on every call.
 */
export function installAuth(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const cfg = route.config ?? {};
    const mode = cfg.auth ?? (route.url.startsWith('/v1/') ? 'key' : 'none');
    if (mode === 'none') return;
    const hook = mode === 'admin' ? adminHook : keyHook(cfg.scope, cfg.publicKey);
    const existing =
      route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [hook as any, ...existing];
  });

  function adminHook(req: FastifyRequest, _reply: FastifyReply, done: Done) {
    const admin = app.svc.config.admin_key;
    // Off, the admin API does not exist: the same 404 as an unknown path, whatever is sent.
    if (!admin) return done(noRoute(req));
    // Bearer only (docs/account.md): x-api-key is the project key's header, and an operator
    // secret there would travel where tenants' keys do (client libraries, logs of their own).
    if (!req.headers.authorization && req.headers['x-api-key'] !== undefined)
      return done(
        apiError('unauthenticated', 'The admin key is accepted only as "Authorization: Bearer <admin key>".')
      );
    const presented = presentedKey(req);
    if (!presented || !sameSecret(presented, admin))
      return done(apiError('unauthenticated', 'This endpoint needs the operator admin key.'));
    done();
  }

  function keyHook(
    scope: string | undefined,
    publicKey?: (key: string) => Principal | null | Promise<Principal | null>
  ) {
    const admit = (req: FastifyRequest, reply: FastifyReply, principal: Principal | null, done: Done) => {
      if (!principal) return done(apiError('unauthenticated', 'The API key is unknown, revoked or expired.'));
      if (principal.status !== 'active') return done(apiError('forbidden', 'This account is suspended.'));
      req.principal = principal;
      const svc = app.svc;
      const tier = svc.config.tiers[principal.tier] ?? svc.config.tiers[svc.config.default_tier];
      const decide = (d: RateDecision) => {
        setRateHeaders(reply, d);
        if (!d.allowed) {
          return done(
            apiError(
              'rate_limited',
              `Over the ${principal.tier} tier's rate of ${tier.rate_per_minute} requests a minute (burst ${tier.burst}). Retry in ${d.retryAfterSeconds} s, or upgrade with POST /v1/account/tier/upgrade.`,
              {
                headers: { 'retry-after': String(d.retryAfterSeconds) },
              }
            )
          );
        }
        if (!scopeAllows(principal.scopes, scope))
          return done(
            apiError('forbidden', `This key's scopes (${principal.scopes.join(', ')}) do not include "${scope}".`)
          );
        done();
      };
      const d = svc.rateLimits.take(principal.keyId, tier);
      if (d instanceof Promise) d.then((x) => guarded(done, () => decide(x)), done);
      else decide(d);
    };
    return function authenticate(req: FastifyRequest, reply: FastifyReply, done: Done) {
      const presented = presentedKey(req);
      if (!presented)
        return done(
          apiError(
            'unauthenticated',
            'No API key. Send it as "Authorization: Bearer <API_KEY>" (or x-api-key). POST /v1/activate creates one.'
          )
        );
      if (publicKey && !presented.startsWith(KEY_PREFIX)) {
        const p = publicKey(presented);
        if (p instanceof Promise) p.then((x) => guarded(done, () => admit(req, reply, x, done)), done);
        else admit(req, reply, p, done);
        return;
      }
      const keys = app.svc.keys;
      const cached = keys.peek(presented);
      if (cached !== undefined) return admit(req, reply, cached, done);
      keys.lookup(presented).then((p) => guarded(done, () => admit(req, reply, p, done)), done);
    };
  }
}
