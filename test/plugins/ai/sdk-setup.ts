import OpenAI from 'openai';
import type { FastifyInstance } from 'fastify';
import { aiApp } from './setup.js';
import type { Tap } from '../../helpers/tap.js';

/** A test gateway listening on loopback, with the official `openai` SDK pointed at its /v1/openai. */
export async function withSdk<E extends { app: FastifyInstance; key: string }>(t: Tap, env: E) {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => env.app.server.closeAllConnections());
  const base = `http://127.0.0.1:${(env.app.server.address() as any).port}`;
  const client = new OpenAI({ apiKey: env.key, baseURL: `${base}/v1/openai`, maxRetries: 0 });
  return { ...env, base, client };
}

/** The AI test gateway (setup.ts) with the SDK. */
export const sdkApp = async (t: Tap, overrides: Record<string, unknown> = {}) => withSdk(t, await aiApp(t, overrides));
