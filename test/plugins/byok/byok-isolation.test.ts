import t from 'tap';
import type { CapabilityImpl, InvokeOptions } from '../../../core/define.js';
import { activate, makeApp } from '../../helpers/app.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import { anthropicFake } from '../../fakes/anthropic-fake.js';
import type { Tap } from '../../helpers/tap.js';
import { MODELS } from '../ai/setup.js';

// database-independent: keys on the wire and in the router; the BYOK rows are byok.test.ts's, on both.

// Two candidates hold keys of one caller: each adapter must see its own and nothing of the
// other's, on the wire and in what the router hands it, even when the first fails over.

const OA_KEY = 'sk-caller-openai-0001';
const AN_KEY = 'sk-caller-anthropic-0002';

interface Seen {
  input: unknown;
  opts: Omit<InvokeOptions, 'signal'>;
}

/**
 * OpenAI (`oa`, model alpha) and Anthropic (`an`, model beta) fakes that accept only the
 * caller's keys, and instances with no operator key: they serve this caller's own keys only.
 */
async function byokPair(t: Tap) {
  const oa = await openAiFake({ key: OA_KEY }).start('/v1');
  const an = await anthropicFake({ key: AN_KEY }).start();
  t.teardown(() => oa.close());
  t.teardown(() => an.close());
  const { app } = await makeApp(t, {
    vendors: [
      { id: 'oa', use: 'openai', config: { api_key: '', base_url: oa.url, models: ['alpha'] } },
      { id: 'an', use: 'anthropic', config: { api_key: '', base_url: an.url, models: ['beta'] } },
    ],
    plugins: { byok: { platform_fee_usd: 0.000005 }, ai: { models: MODELS, first_token_timeout_ms: 2000 } },
  });
  const { auth } = await activate(app);
  return { app, auth, oa, an };
}

/** Wraps an instance's capability so the test sees the input object and invoke options it gets. */
function capture(app: Awaited<ReturnType<typeof byokPair>>['app'], id: string, capability: string): Seen[] {
  const caps = app.svc.vendors.get(id)!.instance.capabilities;
  const inner = caps[capability] as CapabilityImpl;
  const seen: Seen[] = [];
  caps[capability] = {
    ...inner,
    invoke(input, opts) {
      const { signal: _signal, ...rest } = opts;
      seen.push({ input: structuredClone(input), opts: structuredClone(rest) });
      return inner.invoke(input, opts);
    },
  };
  return seen;
}

for (const stream of [false, true]) {
  t.test(
    `two BYOK candidates, the first fails over: each adapter gets only its own key (${stream ? 'stream' : 'call'})`,
    async (t) => {
      const { app, auth, oa, an } = await byokPair(t);
      for (const [provider, key] of [
        ['openai', OA_KEY],
        ['anthropic', AN_KEY],
      ]) {
        const res = await app.inject({
          method: 'POST',
          url: '/v1/byok',
          headers: auth,
          payload: { provider, alias: provider, credentials: { api_key: key } },
        });
        t.equal(res.statusCode, 200, res.body);
      }
      const capability = stream ? 'ai.chat.stream' : 'ai.chat';
      const seenOa = capture(app, 'oa', capability);
      const seenAn = capture(app, 'an', capability);
      oa.next({ status: 503 });
      const res = await app.inject({
        method: 'POST',
        url: '/v1/ai/chat',
        headers: auth,
        payload: { messages: 'x', prefer: 'cheapest', stream },
      });
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      if (stream) t.match(res.body, /"vendor":"an"/);
      else
        t.match(res.json().metadata, {
          vendor: 'an',
          byok: true,
          attempts: [
            { vendor: 'oa', status: 'unavailable' },
            { vendor: 'an', status: 'ok' },
          ],
        });

      // On the wire: each fake received its own caller key and never the other's.
      t.equal(oa.requests.length, 1);
      t.equal(oa.requests[0].headers.authorization, `Bearer ${OA_KEY}`);
      t.equal(an.requests.length, 1);
      t.equal(an.requests[0].headers['x-api-key'], AN_KEY, 'the second vendor got its own key');
      const anWire = JSON.stringify({ headers: an.requests[0].headers, body: an.requests[0].body });
      t.notMatch(anWire, OA_KEY, "the first candidate's key never reached the second vendor");
      t.notMatch(JSON.stringify({ headers: oa.requests[0].headers, body: oa.requests[0].body }), AN_KEY);

      // What the router handed each adapter: its own plan in the invoke options, nothing in the input.
      t.equal(seenOa.length, 1);
      t.equal(seenAn.length, 1);
      t.match(seenOa[0].opts.plan, { model: 'alpha', credentials: { api_key: OA_KEY } });
      t.match(seenAn[0].opts.plan, { model: 'beta', credentials: { api_key: AN_KEY } });
      for (const [seen, foreign, own] of [
        [seenOa[0], AN_KEY, 'oa'],
        [seenAn[0], OA_KEY, 'an'],
      ] as const) {
        t.notOk('plan' in (seen.input as object), `${own}: the input carries no plan`);
        t.notMatch(JSON.stringify(seen.input), /sk-caller/, `${own}: no credentials in the input`);
        t.notMatch(JSON.stringify(seen.opts), foreign, `${own}: no other candidate's key in the invoke options`);
        t.notMatch(JSON.stringify(seen.opts), own === 'oa' ? /beta/ : /alpha/, `${own}: no other candidate's plan`);
      }
    }
  );
}
