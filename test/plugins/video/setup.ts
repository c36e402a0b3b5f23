import type { FastifyInstance } from 'fastify';
import { activate, makeApp } from '../../helpers/app.js';
import type { Tap } from '../../helpers/tap.js';
import { until as waitFor } from '../../helpers/wait.js';

// A gateway with the video area, jobs polled every few ms and video polls 15 ms apart.
export const FAST = { jobs: { poll_ms: 20 }, plugins: { video: { poll_ms: 15, max_poll_ms: 50 } } };

export async function videoApp(t: Tap, overrides: Record<string, unknown> = {}) {
  const { app, dir, config } = await makeApp(t, { ...FAST, ...overrides });
  const a = await activate(app);
  return { app, dir, config, auth: a.auth, accountId: a.account_id };
}
export type Ctx = Awaited<ReturnType<typeof videoApp>>;

export const generate = (c: Ctx, payload: Record<string, unknown>, headers: Record<string, string> = c.auth) =>
  c.app.inject({ method: 'POST', url: '/v1/video/generate', headers, payload });

export const getJob = (c: Ctx, id: string, headers: Record<string, string> = c.auth) =>
  c.app.inject({ method: 'GET', url: `/v1/video/jobs/${id}`, headers });

export const cancel = (c: Ctx, id: string, headers: Record<string, string> = c.auth) =>
  c.app.inject({ method: 'POST', url: `/v1/video/jobs/${id}/cancel`, headers });

/** Wait for the job to reach one of `states`, and for its money to have moved with it. */
export async function until(c: Ctx, id: string, states: string[]): Promise<any> {
  let r: any;
  await waitFor(
    `job ${id} to reach ${states.join('|')}`,
    async () => {
      r = (await getJob(c, id)).json();
      return states.includes(r.state);
    },
    60_000
  );
  return r;
}

export const rows = (app: FastifyInstance) => app.svc.db.selectFrom('video_jobs').selectAll().execute();

/** The account's open holds (in the database, or on SQLite in memory). */
export async function openHolds(c: Ctx): Promise<number> {
  const db = await c.app.svc.db
    .selectFrom('wallet_holds')
    .select('hold_id')
    .where('account_id', '=', c.accountId)
    .execute();
  return db.length + c.app.svc.wallet.holdsInMemory(c.accountId);
}

/** A gateway whose local-render finds no ffmpeg on PATH: nothing serves video unless configured. */
export async function noFfmpegApp(t: Tap, overrides: Record<string, unknown> = {}) {
  const path = process.env.PATH;
  process.env.PATH = '/nonexistent';
  try {
    return await videoApp(t, overrides);
  } finally {
    process.env.PATH = path;
  }
}
