import t from 'tap';
import { makeApp } from '../helpers/app.js';
import { OPENAI_MODELS } from '../../vendors/openai/models.js';

// database-independent: prices from the catalog and config; no row is read.

type Tap = Parameters<typeof makeApp>[0];
type Billing = { unit: string; price_usd: number; free_quota?: number } | null;

// The openai adapter at a loopback address nothing answers on: discovery never calls it.
const OPENAI = { id: 'oa', use: 'openai', config: { api_key: 'sk-discovery-test', base_url: 'http://127.0.0.1:9/v1' } };

async function billing(t: Tap, overrides: Record<string, unknown>): Promise<Map<string, Billing>> {
  const { app } = await makeApp(t, overrides);
  const res = await app.inject({ method: 'GET', url: '/v1/discovery' });
  t.equal(res.statusCode, 200);
  return new Map(res.json().items.map((i: { id: string; billing: Billing }) => [i.id, i.billing]));
}

/** The catalog's cheapest openai price of a kind, in USD per unit: what the gateway already charges by. */
function cheapestOpenAi(kind: string, micros: (e: (typeof OPENAI_MODELS)[number]) => number | undefined): number {
  const rows = OPENAI_MODELS.filter((m) => m.vendor === 'openai' && (m.capabilities as string[]).includes(kind));
  return Math.min(...rows.map((m) => micros(m) ?? Infinity)) / 1e6;
}

t.test('AI operations show the catalog price of the cheapest operator instance, times the markup', async (t) => {
  const chat = cheapestOpenAi('chat', (m) => m.price.in);
  t.ok(chat > 0);
  const prices = await billing(t, { vendors: [OPENAI] });
  // The BYOK-only anthropic and gemini instances also serve chat (gemini-2.0-flash is cheaper),
  // but callers without their own key pay openai's price.
  t.same(prices.get('ai.chat'), { unit: '1m_input_tokens', price_usd: chat }, 'native chat');
  t.same(prices.get('openai.chat.completions'), { unit: '1m_input_tokens', price_usd: chat }, 'OpenAI-shaped');
  t.same(prices.get('ai.embed'), { unit: '1m_input_tokens', price_usd: cheapestOpenAi('embed', (m) => m.price.in) });
  t.same(prices.get('ai.image'), { unit: 'image', price_usd: cheapestOpenAi('image', (m) => m.price.image) });
  const tts = cheapestOpenAi('tts', (m) => m.price.per_million_chars! / 1000);
  t.same(prices.get('ai.tts'), { unit: '1k_characters', price_usd: tts });
  t.same(prices.get('ai.asr'), { unit: 'minute', price_usd: cheapestOpenAi('asr', (m) => m.price.per_minute) });

  const doubled = await billing(t, { vendors: [OPENAI], wallet: { markup: 2 } });
  t.same(doubled.get('ai.chat'), { unit: '1m_input_tokens', price_usd: chat * 2 }, 'markup 2 doubles the price');
});

t.test('a restricted instance is priced by the cheapest of its models; a free local one gives null', async (t) => {
  const pinned = await billing(t, { vendors: [{ ...OPENAI, config: { ...OPENAI.config, models: ['gpt-4o'] } }] });
  t.same(pinned.get('ai.chat'), { unit: '1m_input_tokens', price_usd: 2.5 });
  const ollama = { id: 'local', use: 'openai-compatible', config: { preset: 'ollama' } };
  const local = await billing(t, { vendors: [OPENAI, ollama] });
  t.equal(local.get('ai.chat'), null, 'a call can be free');
  t.not(local.get('ai.image'), null, 'ollama makes no images: image generation still costs');
});

t.test('storage operations show the configured storage prices; free operations stay null', async (t) => {
  const storage = { price_per_gib_month_usd: 0.023, price_per_gib_served_usd: 0.09 };
  const priced = await billing(t, { plugins: { storage } });
  t.same(priced.get('storage.buckets.create'), { unit: 'gib_month', price_usd: 0.023 });
  t.same(priced.get('storage.objects.presign'), { unit: 'gib_served', price_usd: 0.09 });
  for (const free of ['storage.buckets.list', 'storage.objects.list', 'account.get', 'scheduling.queue.publish']) {
    t.ok(priced.has(free), free);
    t.equal(priced.get(free), null, `${free} is free`);
  }
  const unpriced = await billing(t, {});
  t.equal(unpriced.get('storage.buckets.create'), null, 'storage at the default price 0 is free');
  t.equal(unpriced.get('ai.chat'), null, 'no operator AI vendor: the BYOK-only instances charge the gateway nothing');
});
