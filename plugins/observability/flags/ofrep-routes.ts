import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TargetingKeyMissing, type Evaluation } from './evaluate.js';
import { flagService } from './flag-service.js';
import type { FlagStore } from './flag-store.js';
import { evaluateKey } from './flag-routes.js';
import type { BrowserAccess } from './public-access.js';

// The OpenFeature Remote Evaluation Protocol (wire-facts "OFREP"), so OpenFeature's OFREP
// providers evaluate the account's flags unchanged: one flag, or all of them with an ETag
// over the answer (a provider that polls gets 304 while nothing it would see changed).
// Errors are OFREP's `{ key?, errorCode, errorDetails }`, not the gateway's shape.

type Body = { context?: unknown } | undefined;

function contextOf(body: Body): { ctx: Record<string, unknown>; targetingKey?: string } | undefined {
  if (body === undefined || body === null) return { ctx: {} };
  if (typeof body !== 'object' || Array.isArray(body)) return undefined;
  const c = (body as { context?: unknown }).context ?? {};
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return undefined;
  const ctx = c as Record<string, unknown>;
  const tk = ctx.targetingKey;
  if (tk !== undefined && typeof tk !== 'string') return undefined;
  return { ctx, targetingKey: tk as string | undefined };
}

const success = (e: Pick<Evaluation, 'key' | 'value' | 'variant'> & { reason: string }) => ({
  key: e.key,
  value: e.value,
  reason: e.reason,
  variant: e.variant,
  metadata: {},
});

const invalidContext = (reply: FastifyReply, key?: string) =>
  reply
    .code(400)
    .send({ key, errorCode: 'INVALID_CONTEXT', errorDetails: '`context` must be an object; `targetingKey` a string.' });

export function registerOfrepRoutes(app: FastifyInstance, store: FlagStore, browser: BrowserAccess): void {
  const config = { auth: 'key' as const, scope: 'observability:read' };
  const one = browser('/ofrep/v1/evaluate/flags/:key', 'POST');
  const all = browser('/ofrep/v1/evaluate/flags', 'POST');

  app.post<{ Params: { key: string }; Body: Body }>(
    '/ofrep/v1/evaluate/flags/:key',
    {
      ...one,
      config: { ...one.config, ...config, operation: 'observability.ofrep.evaluate' },
      schema: { summary: 'OFREP: evaluate one flag', tags: ['observability'], hide: true } as any,
    },
    async (req: FastifyRequest<{ Params: { key: string }; Body: Body }>, reply) => {
      const key = req.params.key;
      const c = contextOf(req.body);
      if (!c) return invalidContext(reply, key);
      try {
        const r = await evaluateKey(store, req.principal!.accountId, key, c.ctx, c.targetingKey);
        if (!r) return reply.code(404).send({ key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `No flag ${key}.` });
        return success(r);
      } catch (e) {
        if (e instanceof TargetingKeyMissing)
          return reply.code(400).send({ key, errorCode: 'TARGETING_KEY_MISSING', errorDetails: e.message });
        throw e;
      }
    }
  );

  app.post<{ Body: Body }>(
    '/ofrep/v1/evaluate/flags',
    {
      ...all,
      config: { ...all.config, ...config, operation: 'observability.ofrep.bulk' },
      schema: { summary: 'OFREP: evaluate every flag', tags: ['observability'], hide: true } as any,
    },
    async (req: FastifyRequest<{ Body: Body }>, reply) => {
      const c = contextOf(req.body);
      if (!c) return invalidContext(reply);
      const all = await flagService(store).evaluateAll(req.principal!.accountId, c.ctx, c.targetingKey);
      const flags = all.map((f) =>
        'error' in f ? { key: f.key, errorCode: f.error, errorDetails: f.message } : success(f)
      );
      const body = JSON.stringify({ flags });
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      reply.header('etag', etag).header('cache-control', 'no-cache');
      const inm = req.headers['if-none-match'];
      if (typeof inm === 'string' && inm.split(',').some((t) => t.trim() === etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(body);
    }
  );
}
