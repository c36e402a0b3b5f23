import type { FastifyInstance } from 'fastify';
import { makeApp, activate } from '../../helpers/app.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import type { FakeServer } from '../../fakes/script.js';
import type { Tap } from '../../helpers/tap.js';

// Speech test models with round prices so costs are exact: `say` speaks at 1,000 USD per
// million characters (1,000 micro-USD a character); `whisper-test` (verbose_json, the vendor
// names the duration) and `scribe` (json, the gateway measures it) transcribe at 0.6 USD a
// minute (10,000 micro-USD a second).
export const SPEECH_MODELS = [
  {
    id: 'say',
    vendor: 'openai',
    family: 'say',
    tasks: ['general'],
    quality: 50,
    context_window: 4096,
    max_output: 1,
    price: { in: 0, out: 0, per_million_chars: 1_000_000_000 },
    capabilities: ['tts'],
    regions: ['global'],
  },
  {
    id: 'whisper-test',
    vendor: 'openai',
    family: 'whisper',
    tasks: ['general'],
    quality: 60,
    context_window: 1500,
    max_output: 1,
    price: { in: 0, out: 0, per_minute: 600_000 },
    capabilities: ['asr'],
    regions: ['global'],
  },
  {
    id: 'scribe',
    vendor: 'openai',
    family: 'scribe',
    tasks: ['general'],
    quality: 50,
    context_window: 1500,
    max_output: 1,
    price: { in: 0, out: 0, per_minute: 600_000 },
    capabilities: ['asr'],
    regions: ['global'],
  },
];

export interface SpeechApp {
  app: FastifyInstance;
  oa: FakeServer;
  accountId: string;
  auth: { authorization: string };
  key: string;
  balance(): Promise<number>;
}

/** A gateway with an OpenAI fake serving the speech test models as instance `oa`. */
export async function speechApp(
  t: Tap,
  overrides: Record<string, any> = {},
  opts: { apiKey?: string } = {}
): Promise<SpeechApp> {
  const oa = await openAiFake({ key: 'sk-oa' }).start('/v1');
  t.teardown(() => oa.close());
  const { app } = await makeApp(t, {
    ...overrides,
    vendors: [
      {
        id: 'oa',
        use: 'openai',
        config: { api_key: opts.apiKey ?? 'sk-oa', base_url: oa.url, models: SPEECH_MODELS.map((m) => m.id) },
      },
      ...(overrides.vendors ?? []),
    ],
    plugins: { ...(overrides.plugins ?? {}), ai: { models: SPEECH_MODELS } },
  });
  const a = await activate(app);
  return {
    app,
    oa,
    accountId: a.account_id,
    auth: a.auth,
    key: a.key,
    balance: () => app.svc.wallet.balance(a.account_id),
  };
}

/** GET a signed result URL through the gateway's own S3 endpoint (the URL names its host). */
export async function download(app: FastifyInstance, url: string) {
  const u = new URL(url);
  return app.inject({ method: 'GET', url: u.pathname + u.search, headers: { host: u.host } });
}

/** Rows of tables a rejected call must not touch. */
export async function resultCount(app: FastifyInstance): Promise<number> {
  return (await app.svc.db.selectFrom('results').select('result_id').execute()).length;
}
