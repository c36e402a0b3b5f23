import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';

/** Liveness, readiness and version: no key needed. */
export async function registerSystemRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { config: { auth: 'none' }, schema: { hide: true } as any }, async () => ({ ok: true }));

  app.get('/readyz', { config: { auth: 'none' }, schema: { hide: true } as any }, async (req, reply) => {
    try {
      await sql`select 1`.execute(app.svc.db);
      return { ok: true, database: app.svc.dialect };
    } catch (e) {
      // The reason goes to the log only: a readiness probe may be reachable from outside.
      req.log.error({ err: e }, 'readiness check: database unreachable');
      return reply.code(503).send({ ok: false, database: app.svc.dialect, error: 'database unreachable' });
    }
  });

  app.get(
    '/v1/version',
    {
      config: { auth: 'none', operation: 'system.version' },
      schema: {
        summary: "The gateway's version and build",
        tags: ['system'],
        response: {
          200: Type.Object({
            version: Type.String(),
            build: Type.String(),
            node: Type.String(),
            database: Type.String(),
            started_at: Type.String(),
          }),
        },
      },
    },
    async () => ({
      version: app.svc.version,
      build: process.env.SVC_BUILD ?? 'source',
      node: process.version,
      database: app.svc.dialect,
      started_at: new Date(app.svc.startedAt).toISOString(),
    })
  );
}
