import { Type } from '@sinclair/typebox';
import { VendorFailure } from '../../core/kit/vendor.js';

// A fake vendor adapter of `test.message` (test/helpers/outbox-area.ts), scripted by the test:
// each call takes the next mode of its instance's script ('ok' when empty) and is recorded with
// the idempotency key it carried. `idempotency_keys: true` declares that the vendor de-duplicates.

export type Mode = 'ok' | 'not_sent' | 'rate_limited' | 'timeout' | 'unavailable' | 'hang';

export interface FakeScript {
  modes: Mode[];
  calls: { to: string; idempotencyKey?: string }[];
}

const scripts = ((globalThis as any).__svcOutboxFake ??= new Map<string, FakeScript>()) as Map<string, FakeScript>;

export function fake(id: string): FakeScript {
  let s = scripts.get(id);
  if (!s) scripts.set(id, (s = { modes: [], calls: [] }));
  return s;
}

export default {
  kind: 'vendor',
  apiVersion: 1,
  name: 'outbox-fake',
  configSchema: Type.Object(
    {
      idempotency_keys: Type.Boolean({ default: false }),
      price_micros: Type.Integer({ default: 1000 }),
    },
    { additionalProperties: false }
  ),
  create(config: { idempotency_keys: boolean; price_micros: number }, ctx: { instanceId: string }) {
    const s = fake(ctx.instanceId);
    s.modes.length = 0;
    s.calls.length = 0;
    return {
      capabilities: {
        'test.message': {
          idempotencyKeys: config.idempotency_keys,
          price: () => config.price_micros,
          async invoke(input: { to: string }, opts: { idempotencyKey?: string; signal: AbortSignal }) {
            s.calls.push({ to: input.to, idempotencyKey: opts.idempotencyKey });
            const mode = s.modes.shift() ?? 'ok';
            if (mode === 'not_sent') throw new VendorFailure('not_sent', 'connection refused');
            if (mode === 'rate_limited') throw new VendorFailure('rate_limited', '429', { status: 429 });
            if (mode === 'timeout') throw new VendorFailure('timeout', 'no answer');
            if (mode === 'unavailable') throw new VendorFailure('unavailable', '500 after accepting', { status: 500 });
            if (mode === 'hang')
              await new Promise((_r, rej) => opts.signal.addEventListener('abort', () => rej(opts.signal.reason)));
            return { id: `fake-${s.calls.length}`, segments: 2 };
          },
        },
      },
    };
  },
};
