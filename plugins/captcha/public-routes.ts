import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { apiError, hostnameAllowed } from '../../core/kit/area.js';
import type { CaptchaConfigT } from './config.js';
import { accountSigningKey } from './signing-key.js';
import type { SiteKeyRow, SiteKeyStore } from './site-keys.js';

type SiteReq = FastifyRequest<{ Params: { site_key_id: string } }>;

const SiteParams = Type.Object({ site_key_id: Type.String({ minLength: 1, maxLength: 64 }) });
const Challenge = Type.Object({
  algorithm: Type.String(),
  challenge: Type.String(),
  maxnumber: Type.Integer(),
  salt: Type.String(),
  signature: Type.String(),
});

let widgetScript: Promise<Buffer> | undefined;
/** The `altcha` widget's self-contained build (its workers inlined), read once on first use. */
function widget(): Promise<Buffer> {
  // The package exports its UMD build (dist/main/altcha.umd.cjs) but not the minified one beside it.
  const main = createRequire(import.meta.url).resolve('altcha');
  return (widgetScript ??= readFile(join(dirname(main), 'altcha.umd.min.cjs')));
}

/**
 * CORS for a page on the customer's site: any origin when the site key names no hostnames,
 * else only theirs (403 origin_not_allowed for another, so the browser gets no challenge).
 * Returns the page's hostname, which the challenge signs so verify can check it.
 */
function allowOrigin(site: SiteKeyRow, req: FastifyRequest, reply: FastifyReply): string | undefined {
  const origin = req.headers.origin;
  let host: string | undefined;
  try {
    host = origin && origin !== 'null' ? new URL(origin).hostname : undefined;
  } catch {
    host = undefined;
  }
  const open = !site.allowed_hostnames.length;
  if (origin && !open && !(host && hostnameAllowed(host, site.allowed_hostnames)))
    throw apiError('origin_not_allowed', `Origin ${origin} may not use captcha site key ${site.site_key_id}.`);
  reply.header('access-control-allow-origin', open ? '*' : (origin ?? 'null'));
  reply.header('vary', 'origin');
  return host;
}

/**
 * The public half of `service`, called by browsers with no project key: a site key's challenge
 * (signed with its account's key, expiring, at its difficulty) and the widget script. Each
 * answers CORS itself (`cors: false` keeps the API's operator-configured CORS out).
 */
export function registerPublicRoutes(app: FastifyInstance, cfg: CaptchaConfigT, keys: SiteKeyStore): void {
  const config = { auth: 'none' as const, cors: false };

  app.options(
    '/v1/captcha/sites/:site_key_id/*',
    { config, schema: { hide: true, params: Type.Object({ site_key_id: Type.String(), '*': Type.String() }) } as any },
    async (req: SiteReq, reply) => {
      allowOrigin(await keys.byPublicId(req.params.site_key_id), req, reply);
      reply.header('access-control-allow-methods', 'GET, OPTIONS');
      reply.header('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'content-type');
      reply.header('access-control-max-age', '600');
      return reply.code(204).send();
    }
  );

  app.get(
    '/v1/captcha/sites/:site_key_id/challenge',
    {
      config: { ...config, operation: 'captcha.challenge', errors: ['origin_not_allowed', 'not_found'] },
      schema: {
        summary: 'A proof-of-work challenge for the service widget (public: no key; CORS per site key)',
        tags: ['captcha'],
        params: SiteParams,
        response: { 200: Challenge },
      },
    },
    async (req: SiteReq, reply) => {
      const site = await keys.byPublicId(req.params.site_key_id);
      const host = allowOrigin(site, req, reply);
      const { createChallenge } = await import('altcha-lib/v1');
      const params: Record<string, string> = { sk: site.site_key_id, ttl: String(cfg.challenge_ttl_seconds) };
      if (host) params.host = host;
      reply.header('cache-control', 'no-store');
      return createChallenge({
        hmacKey: accountSigningKey(app.svc.masterKey, site.account_id),
        maxnumber: site.difficulty,
        expires: new Date(Date.now() + cfg.challenge_ttl_seconds * 1000),
        params,
      });
    }
  );

  app.get(
    // Outside /v1 like the checkout pages: a page's asset, not an API operation.
    '/captcha/sites/:site_key_id/widget.js',
    { config, schema: { hide: true, params: SiteParams } as any },
    async (req: SiteReq, reply) => {
      allowOrigin(await keys.byPublicId(req.params.site_key_id), req, reply);
      reply.header('content-type', 'text/javascript; charset=utf-8');
      reply.header('cache-control', 'public, max-age=3600');
      return reply.send(await widget());
    }
  );
}
