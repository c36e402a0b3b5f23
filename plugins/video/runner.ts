import {
  type Attempt,
  type CallResult,
  type ErrorCode,
  type JobHandler,
  type VideoAsset,
  type VideoPollInput,
  type VideoPollOutput,
  type VideoSubmitInput,
  type VideoSubmitOutput,
  apiError,
  isApiError,
} from '../../core/kit/area.js';
import { GENERATE } from './planner.js';
import { FINAL, LIVE, type VideoRoute, type VideoRow, holdOf, parseImage, parseRequest, parseRoute } from './store.js';
import { VIDEO_JOB, type VideoDeps } from './submit.js';
import { type Credentials, callOpts, cancelAtVendor, restoreCredentials, usable } from './vendor-calls.js';

// One `video.job` job a step: the submit (with failover across the planned vendors), then one
// job per poll, each enqueued by the last with a unique key per step and a growing delay, so a
// step runs once however many nodes there are and a restart picks up where the row says.

/** A poll that fails (the vendor briefly down) is tried again with the engine's backoff this often. */
const POLL_ATTEMPTS = 10;

function pollDelay(d: VideoDeps, step: number): number {
  return Math.min(d.cfg.max_poll_ms, Math.round(d.cfg.poll_ms * 1.5 ** Math.max(0, step - 1)));
}

async function nextStep(d: VideoDeps, row: VideoRow, step: number): Promise<void> {
  await d.svc.jobs.enqueue({
    kind: VIDEO_JOB,
    payload: { job_id: row.job_id },
    runAt: Date.now() + pollDelay(d, step),
    maxAttempts: POLL_ATTEMPTS,
    uniqueKey: `${VIDEO_JOB}:${row.job_id}:${step}`,
  });
}

/** True when this call failed the job (false: it was final already, e.g. canceled meanwhile). */
async function fail(d: VideoDeps, row: VideoRow, code: ErrorCode, message: string): Promise<boolean> {
  const patch = { state: 'failed' as const, error: JSON.stringify({ code, message }), completed_at: Date.now() };
  const moved = await d.svc.db.transaction().execute(async (trx) => {
    if (!(await d.store.move(row.job_id, LIVE, { ...patch, reference_image: null }, undefined, trx))) return false;
    await d.svc.wallet.release(holdOf(row), trx);
    return true;
  });
  if (moved) d.log.info({ job_id: row.job_id, code }, 'video job failed; its reservation is released');
  return moved;
}

/** The gateway gives up on a job its vendor may still be making: stop it there too. */
async function giveUp(d: VideoDeps, row: VideoRow, code: ErrorCode, message: string): Promise<void> {
  if (await fail(d, row, code, message)) await cancelAtVendor(d, row);
}

const UNKNOWN = 'The submit was interrupted after it was sent, so whether the vendor took the job is unknown.';

/**
 * A submit that failed after it left (a timeout, a reset, a 5xx: the router tries no other
 * vendor then, as `video.generate` is not idempotent) may have started a job at the vendor, and
 * none of the vendors can be asked for a job by our reference: the job fails saying so. (A
 * refusal, 429, 401 or 402, keeps the router's message: the vendor said no.)
 */
function outcomeUnknown(e: unknown): Error | undefined {
  if (!isApiError(e) || (e.code !== 'vendor_error' && e.code !== 'vendor_timeout')) return;
  const last = (e.details.attempts as Attempt[] | undefined)?.filter((a) => a.status !== 'skipped_cost_cap').at(-1);
  if (last?.status !== 'timeout' && last?.status !== 'unavailable') return;
  const what = last.status === 'timeout' ? 'did not answer the submit in time' : 'failed the submit after it was sent';
  return apiError(
    e.code,
    `${last.vendor} ${what}: it may have started the job, so no other vendor was tried; nothing is charged.`,
    { details: e.details }
  );
}

async function submit(d: VideoDeps, row: VideoRow, route: VideoRoute, creds: Credentials): Promise<void> {
  const order = usable(route, creds);
  if (!order.length)
    return giveUp(
      d,
      row,
      'no_vendor_available',
      'No vendor is left for this job: the key it was made with was revoked.'
    );
  // Run again after its submit was sent (its node died, or the engine retried the step): whether
  // the vendor took the job is unknown, and a second submit could make a second, unpolled one.
  if (route.submit_started_at !== undefined) {
    d.log.warn({ job_id: row.job_id, candidates: order }, 'video submit interrupted; not sent again');
    return void (await fail(d, row, 'vendor_error', `${UNKNOWN} No vendor was asked again; nothing is charged.`));
  }
  const started: VideoRoute = { ...route, submit_started_at: Date.now() };
  if (!(await d.store.move(row.job_id, ['queued'], { route: JSON.stringify(started) }, 0))) return; // canceled
  const { reference_image_url: _u, ...request } = parseRequest(row);
  const image = parseImage(row);
  const input: VideoSubmitInput = { ...request, job_id: row.job_id, ...(image ? { reference_image: image } : {}) };
  let r: CallResult<VideoSubmitOutput>;
  try {
    r = await d.svc.router.call<VideoSubmitInput, VideoSubmitOutput>(GENERATE, input, {
      ...callOpts(row, route, creds, order),
      timeoutMs: d.cfg.submit_timeout_seconds * 1000,
    });
  } catch (e) {
    throw outcomeUnknown(e) ?? e;
  }
  const moved = await d.store.move(
    row.job_id,
    ['queued'],
    {
      state: 'running',
      vendor: r.vendor,
      model: route.plans[r.vendor]?.model ?? null,
      vendor_job_id: r.output.vendor_job_id,
      reference_image: null,
      step: 1,
      route: JSON.stringify({ ...started, attempts: r.attempts }),
    },
    0
  );
  if (moved) await nextStep(d, row, 1);
  // Canceled while the submit was out: the vendor's job is nobody's now.
  else await cancelAtVendor(d, row, r.vendor, r.output.vendor_job_id);
}

async function save(d: VideoDeps, row: VideoRow, asset: VideoAsset, name: string): Promise<string> {
  const ext = asset.content_type === 'video/mp4' ? 'mp4' : (asset.content_type.split('/')[1] ?? 'bin');
  const saved = await d.svc.results.save(row.account_id, asset.data, {
    contentType: asset.content_type,
    filename: `${row.job_id}-${name}.${ext}`,
    inline: true,
  });
  return saved.url;
}

async function succeed(d: VideoDeps, row: VideoRow, route: VideoRoute, creds: Credentials, out: VideoPollOutput) {
  if (out.status !== 'succeeded') return;
  const vendor = row.vendor!;
  // Copied into the result store before the move: the vendor's own links expire, ours are signed.
  const video_url = await save(d, row, out.video, 'video');
  const thumbnail_url = out.thumbnail ? await save(d, row, out.thumbnail, 'thumbnail') : null;
  const credentials = creds.get(vendor);
  const routed = { id: vendor, plan: route.plans[vendor], ...(credentials ? { byok: { credentials, fee: 0 } } : {}) };
  const cost = d.svc.router.charge(GENERATE, {}, routed, { seconds: out.seconds });
  // The move and the charge commit together: a cancel racing it either finds the job succeeded
  // (409) or wins and releases the hold, and a node dying leaves neither or both.
  await d.svc.db.transaction().execute(async (trx) => {
    const patch = {
      state: 'succeeded' as const,
      video_url,
      thumbnail_url,
      placeholder: out.placeholder ? 1 : 0,
      cost_micros: cost,
      completed_at: Date.now(),
    };
    if (await d.store.move(row.job_id, ['running'], patch, row.step, trx))
      await d.svc.wallet.settleIn(trx, holdOf(row), cost, { vendor, ref: row.job_id });
  });
}

async function poll(d: VideoDeps, row: VideoRow, route: VideoRoute, creds: Credentials): Promise<void> {
  const vendor = row.vendor!;
  const plan = route.plans[vendor];
  if (Date.now() - Number(row.created_at) > d.cfg.timeout_minutes * 60_000)
    return giveUp(d, row, 'vendor_timeout', `${vendor} did not finish the video in ${d.cfg.timeout_minutes} minutes.`);
  if (!usable(route, creds, [vendor]).length)
    return giveUp(d, row, 'no_vendor_available', 'The key this job was made with was revoked.');
  // Minutes may pass: keep the hold from being taken for one a dead call left behind.
  await d.svc.wallet.refresh(holdOf(row));
  const { reference_image_url: _u, ...request } = parseRequest(row);
  const input: VideoPollInput = {
    vendor_job_id: row.vendor_job_id!,
    job_id: row.job_id,
    model: plan?.model ?? row.model ?? '',
    request: { ...request, seconds: plan?.seconds ?? request.duration_seconds },
    credentials: creds.get(vendor),
  };
  const r = await d.svc.router.call<VideoPollInput, VideoPollOutput>(
    'video.poll',
    input,
    callOpts(row, route, creds, [vendor])
  );
  const o = r.output;
  if (o.status === 'succeeded') return succeed(d, row, route, creds, o);
  if (o.status === 'failed') return void (await fail(d, row, 'vendor_error', `${vendor}: ${o.error}`));
  if (await d.store.move(row.job_id, ['running'], { step: row.step + 1 }, row.step))
    await nextStep(d, row, row.step + 1);
}

export function videoJobHandler(d: VideoDeps): JobHandler<{ job_id: string }> {
  return async (job) => {
    const row = await d.store.get(job.payload.job_id);
    if (!row || FINAL.includes(row.state)) return;
    const route = parseRoute(row);
    try {
      const creds = await restoreCredentials(d, row, route);
      if (row.state === 'queued') return await submit(d, row, route, creds);
      return await poll(d, row, route, creds);
    } catch (e) {
      // The router already tried every candidate: a submit that failed there is final. A poll
      // that failed (the vendor briefly down) is tried again until the job's attempts run out.
      if (row.state === 'running' && job.attempt < job.maxAttempts) throw e;
      await giveUp(
        d,
        row,
        isApiError(e) ? e.code : 'internal_error',
        isApiError(e) ? e.message : 'The video job could not be run.'
      );
      if (!isApiError(e)) d.log.error({ err: e, job_id: row.job_id }, 'video job step failed');
    }
  };
}

/** A job whose step died with its node after its last attempt: fail it and give its money back. */
export async function failVideo(d: VideoDeps, jobId: string, error: string): Promise<void> {
  const row = await d.store.get(jobId);
  if (row && !FINAL.includes(row.state)) await giveUp(d, row, 'internal_error', `The job could not be run: ${error}`);
}
