import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError, decodeCursor, Page, pageOf } from '../../core/kit/area.js';
import { cancelVideo } from './cancel.js';
import { GENERATE } from './planner.js';
import {
  CancelBody,
  CancelResult,
  GenerateBody,
  type GenerateBodyT,
  JobListQuery,
  type JobListQueryT,
  JobParams,
  VideoJob,
} from './schemas.js';
import { videoJob } from './store.js';
import { submitVideo, type VideoDeps } from './submit.js';

export function registerVideoRoutes(app: FastifyInstance, d: VideoDeps): void {
  app.post(
    '/v1/video/generate',
    {
      config: {
        scope: 'video',
        operation: 'video.generate',
        capability: GENERATE,
        idempotent: true,
        errors: ['unprocessable', 'insufficient_balance', 'no_vendor_available', 'payload_too_large'],
      },
      schema: {
        summary: 'Start a text-to-video job; poll GET /v1/video/jobs/{id} for its video',
        tags: ['video'],
        body: GenerateBody,
        response: { 202: VideoJob },
      },
    },
    async (req: FastifyRequest<{ Body: GenerateBodyT }>, reply: FastifyReply) => {
      reply.code(202);
      return submitVideo(d, req, reply, req.body);
    }
  );

  app.get(
    '/v1/video/jobs',
    {
      config: { scope: 'video', operation: 'video.jobs.list' },
      schema: {
        summary: 'The video jobs of this account, newest first, optionally in one state',
        tags: ['video'],
        querystring: JobListQuery,
        response: { 200: Page(VideoJob) },
      },
    },
    async (req: FastifyRequest<{ Querystring: JobListQueryT }>) => {
      const { limit, cursor, state } = req.query;
      const rows = await d.store.listFor(req.principal!.accountId, limit + 1, decodeCursor(cursor), state);
      return pageOf(rows, limit, (r) => ({ t: Number(r.created_at), id: r.job_id }), videoJob);
    }
  );

  app.get(
    '/v1/video/jobs/:id',
    {
      config: { scope: 'video', operation: 'video.jobs.get' },
      schema: {
        summary: 'A video job: its state and, once succeeded, its video and thumbnail URLs',
        tags: ['video'],
        params: JobParams,
        response: { 200: VideoJob },
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const row = await d.store.getFor(req.principal!.accountId, req.params.id);
      if (!row) throw apiError('not_found', `No video job ${req.params.id} in this account.`, { param: 'id' });
      return videoJob(row);
    }
  );

  app.post(
    '/v1/video/jobs/:id/cancel',
    {
      config: { scope: 'video', operation: 'video.jobs.cancel', idempotent: true, errors: ['invalid_state'] },
      schema: {
        summary: 'Cancel a queued or running video job: its reservation is released and the vendor asked to stop',
        tags: ['video'],
        params: JobParams,
        body: CancelBody,
        response: { 200: CancelResult },
      },
      // The body is optional (only `idempotency_key`): a POST without one means `{}`.
      preValidation: async (req) => {
        if (req.body == null) req.body = {};
      },
    },
    async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) =>
      cancelVideo(d, req, reply, req.params.id)
  );
}
