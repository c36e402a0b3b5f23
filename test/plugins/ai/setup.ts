import { makeApp, activate } from '../../helpers/app.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import { anthropicFake } from '../../fakes/anthropic-fake.js';
import type { FakeServer } from '../../fakes/script.js';
import type { Tap } from '../../helpers/tap.js';

// Two test models with round prices (micro-USD per million tokens) so costs are exact:
// alpha on an OpenAI fake at 1 / 2 USD per M in / out, beta on an Anthropic fake at 2 / 4.
export const MODELS = [
  {
    id: 'alpha',
    vendor: 'openai',
    family: 'alpha',
    tasks: ['general', 'coding'],
    quality: 50,
    context_window: 8000,
    max_output: 1000,
    price: { in: 1_000_000, out: 2_000_000 },
    capabilities: ['chat', 'tools', 'json'],
    regions: ['global'],
  },
  {
    id: 'beta',
    vendor: 'anthropic',
    family: 'beta',
    tasks: ['general', 'reasoning'],
    quality: 90,
    context_window: 8000,
    max_output: 1000,
    price: { in: 2_000_000, out: 4_000_000 },
    capabilities: ['chat', 'tools', 'json'],
    regions: ['western'],
  },
  // Only for the concurrency test (pinned by model): output-only pricing, 1 USD/M.
  {
    id: 'fixed',
    vendor: 'openai',
    family: 'fixed',
    tasks: ['long_context'],
    quality: 1,
    context_window: 8000,
    max_output: 1000,
    price: { in: 0, out: 1_000_000 },
    capabilities: ['chat'],
    regions: ['global'],
  },
  {
    id: 'emb',
    vendor: 'openai',
    family: 'emb',
    tasks: ['general'],
    quality: 50,
    context_window: 8000,
    max_output: 1,
    price: { in: 1_000_000, out: 0 },
    capabilities: ['embed'],
    regions: ['global'],
  },
];

export interface AiTestApp {
  app: Awaited<ReturnType<typeof makeApp>>['app'];
  oa: FakeServer;
  an: FakeServer;
  key: string;
  accountId: string;
  auth: { authorization: string };
}

/** A gateway with an OpenAI fake (`oa`, model alpha) and an Anthropic fake (`an`, model beta). */
export async function aiApp(
  t: Tap,
  overrides: Record<string, any> = {},
  opts: { oaKey?: string } = {}
): Promise<AiTestApp> {
  const oa = await openAiFake({ key: 'sk-oa' }).start('/v1');
  const an = await anthropicFake({ key: 'sk-an' }).start();
  t.teardown(() => oa.close());
  t.teardown(() => an.close());
  const { app } = await makeApp(t, {
    vendors: [
      {
        id: 'oa',
        use: 'openai',
        config: { api_key: opts.oaKey ?? 'sk-oa', base_url: oa.url, models: ['alpha', 'fixed', 'emb'] },
      },
      { id: 'an', use: 'anthropic', config: { api_key: 'sk-an', base_url: an.url, models: ['beta'] } },
    ],
    ...overrides,
    // Short enough for the stall tests, long enough that a loaded 2-core CI machine (four test
    // files at a time) gets the fake's first token in: 500 ms once gave a healthy stream a 504.
    plugins: {
      ...(overrides.plugins ?? {}),
      ai: { models: MODELS, first_token_timeout_ms: 2000, ...(overrides.plugins?.ai ?? {}) },
    },
  });
  const a = await activate(app);
  return { app, oa, an, key: a.key, accountId: a.account_id, auth: a.auth };
}
