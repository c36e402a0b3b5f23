import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  defineArea,
  type VendorDefinition,
  apiError,
  iso,
  ListQuery,
  decodeCursor,
  pageOf,
  type ListQueryT,
  usdToMicros,
  Ok,
  credentialValues,
  scrubText,
  idempotentTransaction,
  fieldError,
} from '../../core/kit/area.js';
import { servesProvider } from './providers.js';
import { BYOK_CHANGED, ByokStore, type ByokRow, type TestResult as TestResultT } from './store.js';
import { ByokCredentials } from './credentials-provider.js';
import { byokMigrations } from './migrations.js';
import { ByokIdParams, ByokKey, ByokList, CreateByokBody, TestResult, type CreateByokBodyT } from './schemas.js';

function wire(r: ByokRow) {
  return {
    byok_id: r.byok_id,
    provider: r.provider,
    alias: r.alias,
    state: r.state,
    created_at: iso(r.created_at),
    ...(r.test_result ? { test_result: r.test_result } : {}),
  };
}

/** Never let a credential value reach a response or a log through a vendor's error message. */
function scrub(text: string, creds: Record<string, string>): string {
  return scrubText(text, credentialValues(creds));
}

/**
 * Bring your own key: register, list, test and revoke vendor credentials. They are sealed
 * with AES-256-GCM under a key derived from the master key and opened only for a call.
 */
export default defineArea({
  name: 'byok',
  migrations: byokMigrations,
  configSchema: Type.Object(
    {
      platform_fee_usd: Type.Number({
        minimum: 0,
        default: 0.0001,
        description: "Charged per call served with the caller's own key, instead of the vendor price.",
      }),
      test_timeout_ms: Type.Integer({ minimum: 100, default: 10000 }),
    },
    { additionalProperties: false }
  ),
  async register(app, ctx) {
    const svc = ctx.svc;
    const store = new ByokStore(svc.db, svc.masterKey, svc.bus);
    // The router asks this provider for a caller's keys on every planned call (BYOK first, at the fee).
    const provider = new ByokCredentials(store, usdToMicros(ctx.config.platform_fee_usd), ctx.log);
    svc.router.credentials(provider);
    const unsubscribe = await svc.bus.subscribe(BYOK_CHANGED, (m) =>
      provider.noByok.changed((m as { accountId: string }).accountId)
    );
    app.addHook('onClose', async () => unsubscribe().catch(() => undefined));
    const instancesFor = (provider: string) => svc.vendors.all().filter((i) => servesProvider(i, provider));
    const definitionFor = (provider: string): VendorDefinition | undefined => instancesFor(provider)[0]?.def;

    app.post(
      '/v1/byok',
      {
        config: { scope: 'byok', operation: 'byok.create', idempotent: true },
        schema: {
          summary: 'Register your own vendor credentials (write-only)',
          tags: ['byok'],
          body: CreateByokBody,
          response: { 200: ByokKey },
        },
      },
      async (req: FastifyRequest<{ Body: CreateByokBodyT }>, reply: FastifyReply) => {
        const { provider, alias, credentials } = req.body;
        const def = definitionFor(provider);
        if (!def?.byok) {
          const known = [
            ...new Set(
              svc.vendors
                .all()
                .filter((i) => i.def.byok)
                .flatMap((i) => [i.def.byok!.provider, i.id])
            ),
          ].sort();
          throw fieldError(
            'provider',
            'is not a BYOK provider',
            `provider "${provider}" takes no BYOK credentials on this gateway. Known: ${known.join(', ') || 'none'}.`
          );
        }
        if (!Value.Check(def.byok.credentials, credentials)) {
          // Name the fields, never echo their values.
          const errors = [...Value.Errors(def.byok.credentials, credentials)].map((e) => ({
            param: `credentials${e.path.replace(/\//g, '.') || ''}`,
            message: e.message,
          }));
          throw apiError(
            'validation_failed',
            `credentials for ${provider} are not valid: ${errors.map((e) => `${e.param} ${e.message}`).join('; ')}.`,
            { param: errors[0]?.param ?? 'credentials', details: { errors } }
          );
        }
        const accountId = req.principal!.accountId;
        const answer = await idempotentTransaction(svc, req, reply, async (trx) =>
          wire(await store.create(accountId, provider, alias, credentials, trx))
        );
        store.changed(accountId);
        return answer;
      }
    );

    app.get(
      '/v1/byok',
      {
        config: { scope: 'byok:read', operation: 'byok.list' },
        schema: {
          summary: 'List your BYOK credentials (never their secrets)',
          tags: ['byok'],
          querystring: ListQuery,
          response: { 200: ByokList },
        },
      },
      async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
        const rows = await store.list(req.principal!.accountId, req.query.limit + 1, decodeCursor(req.query.cursor));
        return pageOf(rows, req.query.limit, (r) => ({ t: r.created_at, id: r.byok_id }), wire);
      }
    );

    app.post(
      '/v1/byok/:id/test',
      {
        config: { scope: 'byok', operation: 'byok.test', errors: ['invalid_state', 'no_vendor_available'] },
        schema: {
          summary: "Check the credentials against the vendor's cheapest authenticated endpoint",
          tags: ['byok'],
          params: ByokIdParams,
          response: { 200: TestResult },
        },
      },
      async (req: FastifyRequest<{ Params: { id: string } }>) => {
        const accountId = req.principal!.accountId;
        const row = await store.get(accountId, req.params.id);
        if (!row) throw apiError('not_found', `No BYOK credential ${req.params.id}.`, { param: 'id' });
        if (row.state === 'revoked')
          throw apiError('invalid_state', 'This credential is revoked; register a new one.', { param: 'id' });
        const inst = instancesFor(row.provider).find((i) => i.instance.health);
        if (!inst) throw apiError('no_vendor_available', `No configured vendor can test ${row.provider} credentials.`);
        const creds = await store.credentials(accountId, row.byok_id);
        const started = performance.now();
        let result: TestResultT;
        try {
          const h = await inst.instance.health!({
            signal: AbortSignal.timeout(ctx.config.test_timeout_ms),
            credentials: creds,
          });
          const latency_ms = Math.round(performance.now() - started);
          result = h.ok
            ? { ok: true, latency_ms }
            : {
                ok: false,
                latency_ms,
                error: {
                  code: 'vendor_rejected',
                  message: scrub(h.error ?? 'the vendor rejected the credentials', creds),
                },
              };
        } catch (e) {
          result = {
            ok: false,
            latency_ms: Math.round(performance.now() - started),
            error: { code: 'vendor_unreachable', message: scrub((e as Error).message, creds) },
          };
        }
        await store.recordTest(accountId, row.byok_id, result);
        return result;
      }
    );

    app.delete(
      '/v1/byok/:id',
      {
        config: { scope: 'byok', operation: 'byok.revoke' },
        schema: {
          summary: 'Revoke a credential for good',
          tags: ['byok'],
          params: ByokIdParams,
          response: { 200: Ok },
        },
      },
      async (req: FastifyRequest<{ Params: { id: string } }>) => {
        const accountId = req.principal!.accountId;
        if (!(await store.get(accountId, req.params.id)))
          throw apiError('not_found', `No BYOK credential ${req.params.id}.`, { param: 'id' });
        await store.revoke(accountId, req.params.id);
        return { ok: true };
      }
    );
  },
});
