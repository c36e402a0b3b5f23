import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import { anthropicFake } from '../../fakes/anthropic-fake.js';
import type { FakeServer } from '../../fakes/script.js';
import type { Tap } from '../../helpers/tap.js';

// Test models with round prices: `pix` (0.04 USD an image) on OpenAI fake `oa`, `pix2`
// (0.05 USD an image, the failover) on OpenAI fake `oa2`; vision models `seer` on `oa`
// (1 / 2 USD per M tokens in / out) and `eye` on the Anthropic fake `an` (2 / 4).
export const MEDIA_MODELS = [
  {
    id: 'pix',
    vendor: 'openai',
    family: 'pix',
    tasks: ['general'],
    quality: 80,
    context_window: 4000,
    max_output: 1,
    price: { in: 0, out: 0, image: 40_000 },
    capabilities: ['image'],
    regions: ['global'],
  },
  {
    id: 'pix2',
    vendor: 'openai',
    family: 'pix',
    tasks: ['general'],
    quality: 60,
    context_window: 4000,
    max_output: 1,
    price: { in: 0, out: 0, image: 50_000 },
    capabilities: ['image'],
    regions: ['global'],
  },
  {
    id: 'seer',
    vendor: 'openai',
    family: 'seer',
    tasks: ['general'],
    quality: 50,
    context_window: 8000,
    max_output: 100,
    price: { in: 1_000_000, out: 2_000_000 },
    capabilities: ['chat', 'vision'],
    regions: ['global'],
  },
  {
    id: 'eye',
    vendor: 'anthropic',
    family: 'eye',
    tasks: ['general'],
    quality: 90,
    context_window: 8000,
    max_output: 100,
    price: { in: 2_000_000, out: 4_000_000 },
    capabilities: ['chat', 'vision'],
    regions: ['global'],
  },
];

export interface MediaApp {
  app: Awaited<ReturnType<typeof listeningApp>>['app'];
  base: string;
  oa: FakeServer;
  oa2: FakeServer;
  an: FakeServer;
  key: string;
  accountId: string;
  auth: { authorization: string };
}

/** A listening gateway (its result URLs download with plain fetch) with the two OpenAI fakes and the Anthropic fake. */
export async function mediaApp(
  t: Tap,
  overrides: Record<string, any> = {},
  opts: { oaModels?: string[] } = {}
): Promise<MediaApp> {
  const oa = await openAiFake({ key: 'sk-oa' }).start('/v1');
  const oa2 = await openAiFake({ key: 'sk-oa2', name: 'fake-openai-2' }).start('/v1');
  const an = await anthropicFake({ key: 'sk-an' }).start();
  for (const f of [oa, oa2, an]) t.teardown(() => f.close());
  const { app, base } = await listeningApp(t, {
    vendors: [
      {
        id: 'oa',
        use: 'openai',
        config: { api_key: 'sk-oa', base_url: oa.url, models: opts.oaModels ?? ['pix', 'seer'] },
      },
      { id: 'oa2', use: 'openai', config: { api_key: 'sk-oa2', base_url: oa2.url, models: ['pix2'] } },
      { id: 'an', use: 'anthropic', config: { api_key: 'sk-an', base_url: an.url, models: ['eye'] } },
    ],
    plugins: { ai: { models: MEDIA_MODELS } },
    ...overrides,
  });
  t.teardown(() => app.server.closeAllConnections());
  const a = await activate(app);
  return { app, base, oa, oa2, an, key: a.key, accountId: a.account_id, auth: a.auth };
}

/** A loopback server answering every GET with the given status, type and bytes (an image host). */
export async function imageHost(t: Tap, body: Buffer, type = 'image/png', status = 200): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(status, { 'content-type': type }).end(body));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  t.teardown(() => new Promise<void>((ok) => (server.closeAllConnections(), server.close(() => ok()))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
