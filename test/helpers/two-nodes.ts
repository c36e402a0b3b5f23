import type { FastifyInstance } from 'fastify';
import { startGateway, type GatewayProcess } from './gateway-process.js';
import { listeningApp } from './listening-app.js';

export const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Two gateways on one PostgreSQL and one Redis: node A in this process, node B a real process on
 * the same data dir (the same master key, so each accepts what the other signs). `config` is
 * both nodes' extra config (plugins…).
 */
export async function twoNodes(
  t: Parameters<typeof listeningApp>[0],
  config: Record<string, unknown> = {}
): Promise<{ app: FastifyInstance; base: string; b: GatewayProcess }> {
  const { app, base, dir } = await listeningApp(t, { redis: { url: REDIS_URL }, ...config });
  const shared = { data_dir: dir, database: { url: app.svc.config.database.url }, redis: { url: REDIS_URL } };
  const b = await startGateway(t, dir, { ...shared, ...config }, 'node-b');
  return { app, base, b };
}
