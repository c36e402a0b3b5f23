import type { Kysely, Transaction } from 'kysely';
import {
  type Attempt,
  type CursorPos,
  type Hold,
  type VideoPlan,
  type VideoReferenceImage,
  type VideoRequest,
  microsToUsd,
  newestFirst,
} from '../../core/kit/area.js';

export type VideoState = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
export const VIDEO_STATES: readonly VideoState[] = ['queued', 'running', 'succeeded', 'failed', 'canceled'];
export const FINAL: readonly VideoState[] = ['succeeded', 'failed', 'canceled'];
export const LIVE: VideoState[] = ['queued', 'running'];

/** The candidates a job may be submitted to, in order, with their plans (no credentials). */
export interface VideoRoute {
  order: string[];
  plans: Record<string, VideoPlan>;
  /** Those of them that run on the caller's own key (read again when used, never stored). */
  byok: string[];
  /** The submit's attempts, once made. */
  attempts?: Attempt[];
  /** When the submit was sent, recorded before: a step run again after it never sends a second. */
  submit_started_at?: number;
}

/** The request as stored: what every vendor is asked, and where the reference image came from. */
export interface StoredRequest extends VideoRequest {
  reference_image_url?: string;
}

export interface VideoRow {
  job_id: string;
  account_id: string;
  state: VideoState;
  request: string;
  reference_image: string | null;
  route: string;
  hold_id: string;
  hold_micros: number | string;
  vendor: string | null;
  model: string | null;
  vendor_job_id: string | null;
  step: number;
  video_url: string | null;
  thumbnail_url: string | null;
  placeholder: number;
  error: string | null;
  cost_micros: number | string;
  created_at: number | string;
  updated_at: number | string;
  completed_at: number | string | null;
}

export const HOLD_CAPABILITY = 'video.generate';

export function holdOf(row: VideoRow): Hold {
  return {
    holdId: row.hold_id,
    accountId: row.account_id,
    amount: Number(row.hold_micros),
    capability: HOLD_CAPABILITY,
  };
}

export const parseRequest = (row: VideoRow): StoredRequest => JSON.parse(row.request) as StoredRequest;
export const parseRoute = (row: VideoRow): VideoRoute => JSON.parse(row.route) as VideoRoute;
export const parseImage = (row: VideoRow): VideoReferenceImage | undefined =>
  row.reference_image ? (JSON.parse(row.reference_image) as VideoReferenceImage) : undefined;

type Db = Kysely<any> | Transaction<any>;

/** Rows of `video_jobs`; every move is conditional on the state (and step) it leaves, so two nodes cannot both make it. */
export class VideoStore {
  constructor(private readonly db: Kysely<any>) {}

  async insert(row: VideoRow, trx: Db = this.db): Promise<void> {
    await trx.insertInto('video_jobs').values(row).execute();
  }

  async get(jobId: string, trx: Db = this.db): Promise<VideoRow | undefined> {
    return (await trx.selectFrom('video_jobs').selectAll().where('job_id', '=', jobId).executeTakeFirst()) as
      | VideoRow
      | undefined;
  }

  /** Only the owner sees a job: another account's id is as unknown as a made-up one. */
  async getFor(accountId: string, jobId: string): Promise<VideoRow | undefined> {
    return (await this.db
      .selectFrom('video_jobs')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()) as VideoRow | undefined;
  }

  /** The account's jobs newest first, after `before`, optionally in one state: `limit` of them. */
  async listFor(accountId: string, limit: number, before?: CursorPos, state?: VideoState): Promise<VideoRow[]> {
    let q = this.db.selectFrom('video_jobs').selectAll().where('account_id', '=', accountId);
    if (state) q = q.where('state', '=', state);
    return (await newestFirst(q, 'job_id', limit, before).execute()) as VideoRow[];
  }

  /** `trx`: the transaction that also moves the job's money (its hold settled or released). */
  async move(jobId: string, from: VideoState[], patch: Partial<VideoRow>, step?: number, trx: Db = this.db) {
    let q = trx
      .updateTable('video_jobs')
      .set({ ...patch, updated_at: Date.now() })
      .where('job_id', '=', jobId)
      .where('state', 'in', from);
    if (step !== undefined) q = q.where('step', '=', step);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Final jobs completed before `before`, at most `limit` of them: retention. */
  async sweep(before: number, limit: number): Promise<number> {
    const ids = await this.db
      .selectFrom('video_jobs')
      .select('job_id')
      .where('state', 'in', [...FINAL])
      .where('completed_at', '<', before)
      .limit(limit)
      .execute();
    if (!ids.length) return 0;
    const r = await this.db
      .deleteFrom('video_jobs')
      .where(
        'job_id',
        'in',
        ids.map((i) => i.job_id)
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

/** The wire VideoJob of GET /v1/video/jobs/{id}. */
export function videoJob(row: VideoRow) {
  const iso = (v: number | string | null) => (v === null ? null : new Date(Number(v)).toISOString());
  return {
    job_id: row.job_id,
    state: row.state,
    ...(row.video_url ? { video_url: row.video_url } : {}),
    ...(row.thumbnail_url ? { thumbnail_url: row.thumbnail_url } : {}),
    ...(row.error ? { error: JSON.parse(row.error) as { code: string; message: string } } : {}),
    ...(row.vendor ? { vendor: row.vendor } : {}),
    ...(row.model ? { model: row.model } : {}),
    ...(row.placeholder ? { placeholder: true } : {}),
    duration_seconds: parseRequest(row).duration_seconds,
    cost_usd: microsToUsd(Number(row.cost_micros)),
    created_at: iso(row.created_at)!,
    completed_at: iso(row.completed_at),
  };
}
