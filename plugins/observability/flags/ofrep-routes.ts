import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { evaluateFlag, TargetingKeyMissing, type Evaluation } from './evaluate.js';
import type { FlagStore } from './flag-store.js';
import { evaluateKey } from './flag-routes.js';

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

const success = (e: Evaluation) => ({ key: e.key, value: e.value, reason: e.reason, variant: e.variant, metadata: {} });

const invalidContext = (reply: FastifyReply, key?: string) =>
  reply
    .code(400)
    .send({ key, errorCode: 'INVALID_CONTEXT', errorDetails: '`context` must be an object; `targetingKey` a string.' });

export function registerOfrepRoutes(app: FastifyInstance, store: FlagStore): void {
  const config = { auth: 'key' as const, scope: 'observability:read' };

  app.post(
    '/ofrep/v1/evaluate/flags/:key',
    {
      config: { ...config, operation: 'observability.ofrep.evaluate' },
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

  app.post(
    '/ofrep/v1/evaluate/flags',
    {
      config: { ...config, operation: 'observability.ofrep.bulk' },
      schema: { summary: 'OFREP: evaluate every flag', tags: ['observability'], hide: true } as any,
    },
    async (req: FastifyRequest<{ Body: Body }>, reply) => {
      const c = contextOf(req.body);
      if (!c) return invalidContext(reply);
      const loaded = await store.flags(req.principal!.accountId);
      const flags = [...loaded.flags.values()]
        .sort((a, b) => (a.key < b.key ? -1 : 1))
        .map((f) => {
          try {
            return success(evaluateFlag(f, c.ctx, c.targetingKey));
          } catch (e) {
            if (!(e instanceof TargetingKeyMissing)) throw e;
            return { key: f.key, errorCode: 'TARGETING_KEY_MISSING', errorDetails: e.message };
          }
        });
      const body = JSON.stringify({ flags });
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      reply.header('etag', etag).header('cache-control', 'no-cache');
      const inm = req.headers['if-none-match'];
      if (typeof inm === 'string' && inm.split(',').some((t) => t.trim() === etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(body);
    }
  );
}
