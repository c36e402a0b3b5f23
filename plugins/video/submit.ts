import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import {
  type Svc,
  type Routed,
  type VideoReferenceImage,
  type VideoSubmitInput,
  apiError,
  idempotentTransaction,
  newId,
  notAnImage,
  sniffImage,
} from '../../core/kit/area.js';
import type { VideoConfigT } from './config.js';
import { assertOffered } from './offered.js';
import { GENERATE, type VideoCandidate, type VideoPlanInput } from './planner.js';
import type { GenerateBodyT, VideoJobT } from './schemas.js';
import { HOLD_CAPABILITY, type StoredRequest, type VideoRoute, type VideoStore, videoJob } from './store.js';

export const VIDEO_JOB = 'video.job';

export interface VideoDeps {
  svc: Svc;
  cfg: VideoConfigT;
  store: VideoStore;
  log: Logger;
}

/** The reference image through the egress guard (SSRF rules, size and time caps): an image, or a 4xx. */
async function fetchImage(d: VideoDeps, url: string): Promise<VideoReferenceImage> {
  const param = 'reference_image_url';
  const res = await d.svc.egress.fetch(url, {
    param,
    maxBytes: Math.min(d.svc.egress.cfg.max_bytes, d.cfg.max_reference_image_mib * 1024 * 1024),
  });
  if (res.status < 200 || res.status > 299)
    throw apiError('unprocessable', `${param} answered HTTP ${res.status}, not an image.`, {
      param,
      details: { status: res.status },
    });
  const kind = sniffImage(res.body);
  if (kind !== 'jpeg' && kind !== 'png' && kind !== 'webp')
    throw apiError('unprocessable', `${notAnImage(param)} A video starts from a JPEG, PNG or WebP image.`, { param });
  return { url, content_type: `image/${kind}`, data: res.body.toString('base64') };
}

/** The caller's key is stored nowhere: the job reads it again from the BYOK store when it runs. */
function routeOf(planned: Array<Routed<VideoCandidate>>): VideoRoute {
  return {
    order: planned.map((c) => c.id),
    plans: Object.fromEntries(planned.map((c) => [c.id, c.plan])),
    byok: planned.filter((c) => c.byok).map((c) => c.id),
  };
}

/**
 * POST /v1/video/generate: check what can serve the request, fetch the reference image, plan
 * the candidates, then in one transaction reserve the dearest estimate within the cost cap,
 * write the job and its first step, and store the idempotent answer. A rejected call writes
 * nothing and charges nothing; the vendor is called by the job, never here.
 */
export async function submitVideo(
  d: VideoDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  body: GenerateBodyT
): Promise<VideoJobT> {
  const { accountId, region } = req.principal!;
  const request: StoredRequest = {
    prompt: body.prompt,
    duration_seconds: body.duration_seconds ?? d.cfg.default_duration_seconds,
    aspect: body.aspect ?? d.cfg.default_aspect,
    resolution: body.resolution ?? '720p',
    ...(body.reference_image_url ? { reference_image_url: body.reference_image_url } : {}),
  };
  const sel = { vendor: body.vendor, model: body.model, region };
  d.svc.router.assertServed(GENERATE, sel);
  assertOffered(d.svc, sel, request);
  const image = body.reference_image_url ? await fetchImage(d, body.reference_image_url) : undefined;
  const planInput: VideoPlanInput = {
    prefer: body.prefer ?? 'balanced',
    resolution: request.resolution,
    aspect: request.aspect,
    duration_seconds: request.duration_seconds,
    has_image: !!image,
  };
  const planned = await d.svc.router.plan<VideoPlanInput, VideoCandidate>(GENERATE, {
    accountId,
    ...sel,
    request: planInput,
  });
  const jobId = newId('job');
  const { reference_image_url: _url, ...asked } = request;
  const input: VideoSubmitInput = { ...asked, job_id: jobId };
  const answer = await idempotentTransaction(d.svc, req, reply, async (trx) => {
    const { hold, route } = await d.svc.router.reserve(GENERATE, input, {
      accountId,
      route: planned,
      holdCapability: HOLD_CAPABILITY,
      trx,
    });
    const now = Date.now();
    const row = {
      job_id: jobId,
      account_id: accountId,
      state: 'queued' as const,
      request: JSON.stringify(request),
      reference_image: image ? JSON.stringify(image) : null,
      route: JSON.stringify(routeOf(route as Array<Routed<VideoCandidate>>)),
      hold_id: hold.holdId,
      hold_micros: hold.amount,
      vendor: null,
      model: null,
      vendor_job_id: null,
      step: 0,
      video_url: null,
      thumbnail_url: null,
      placeholder: 0,
      error: null,
      cost_micros: 0,
      created_at: now,
      updated_at: now,
      completed_at: null,
    };
    await d.store.insert(row, trx);
    await d.svc.jobs.enqueue(
      { kind: VIDEO_JOB, payload: { job_id: jobId }, uniqueKey: `${VIDEO_JOB}:${jobId}:0` },
      trx
    );
    return videoJob(row);
  });
  d.svc.jobs.wake(VIDEO_JOB);
  req.meter.metered = true;
  return answer;
}
