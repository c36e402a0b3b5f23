import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { THUMB_JPEG, testMp4 } from './video-fixture.js';

// A fake of OpenAI's Videos API (POST /v1/videos multipart, GET /v1/videos/{id},
// GET /v1/videos/{id}/content?variant=video|thumbnail, DELETE /v1/videos/{id}), with its
// Video object and error shapes. A video completes after `pollsUntilDone` GETs.

export interface SoraJob {
  id: string;
  form: Record<string, string>;
  reference?: { type: string; size: number };
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  polls: number;
  deleted: boolean;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function openAiVideosFake() {
  const state = {
    jobs: new Map<string, SoraJob>(),
    pollsUntilDone: 1,
    outcome: 'completed' as 'completed' | 'failed',
    /** Status of the next POST /v1/videos answers (then 200 again). */
    submitStatus: [] as number[],
    /** Take the next submits' jobs, then never answer (a vendor that accepted and hung). */
    hangAfterAccept: false,
    deletes: [] as string[],
    auth: [] as string[],
    url: '',
    close: async () => {},
  };
  let seq = 0;
  const json = (res: import('node:http').ServerResponse, status: number, v: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
  const error = (res: import('node:http').ServerResponse, status: number, message: string) =>
    json(res, status, { error: { message, type: 'invalid_request_error', param: null, code: null } });
  const wire = (j: SoraJob) => ({
    id: j.id,
    object: 'video',
    model: j.form.model,
    status: j.status,
    progress: j.status === 'completed' ? 100 : j.status === 'in_progress' ? 50 : 0,
    created_at: 1_700_000_000,
    completed_at: j.status === 'completed' ? 1_700_000_100 : null,
    expires_at: null,
    prompt: j.form.prompt,
    seconds: j.form.seconds,
    size: j.form.size,
    remixed_from_video_id: null,
    error: j.status === 'failed' ? { code: 'moderation_blocked', message: 'The prompt was blocked.' } : null,
  });
  const server = createServer(async (req, res) => {
    state.auth.push(String(req.headers.authorization));
    const url = new URL(req.url ?? '/', 'http://x');
    const m = url.pathname.match(/^\/v1\/videos(?:\/([^/]+))?(\/content)?$/);
    if (!m) return error(res, 404, 'Unknown path');
    if (req.method === 'POST' && !m[1]) {
      const status = state.submitStatus.shift();
      if (status) return error(res, status, 'The server had an error while processing your request.');
      const request = new Request('http://x', {
        method: 'POST',
        headers: { 'content-type': String(req.headers['content-type']) },
        body: await body(req),
      });
      const fd = await request.formData();
      const form: Record<string, string> = {};
      let reference: SoraJob['reference'];
      for (const [k, v] of fd.entries()) {
        if (typeof v === 'string') form[k] = v;
        else reference = { type: v.type, size: v.size };
      }
      if (!['4', '8', '12'].includes(form.seconds)) return error(res, 400, "Invalid value for 'seconds'.");
      const job: SoraJob = { id: `video_${++seq}`, form, reference, status: 'queued', polls: 0, deleted: false };
      state.jobs.set(job.id, job);
      if (state.hangAfterAccept) return;
      return json(res, 200, wire(job));
    }
    const job = m[1] ? state.jobs.get(m[1]) : undefined;
    if (!job || job.deleted) return error(res, 404, `Video ${m[1]} not found.`);
    if (req.method === 'DELETE') {
      state.deletes.push(job.id);
      job.deleted = true;
      return json(res, 200, { id: job.id, object: 'video.deleted', deleted: true });
    }
    if (m[2]) {
      if (job.status !== 'completed') return error(res, 400, 'Video is not ready yet.');
      const variant = url.searchParams.get('variant') ?? 'video';
      if (variant === 'thumbnail') return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(THUMB_JPEG);
      const [w, h] = job.form.size.split('x').map(Number);
      return res.writeHead(200, { 'content-type': 'video/mp4' }).end(testMp4(w, h, Number(job.form.seconds)));
    }
    if (job.status === 'queued' || job.status === 'in_progress') {
      job.polls++;
      job.status = job.polls >= state.pollsUntilDone ? state.outcome : 'in_progress';
    }
    return json(res, 200, wire(job));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections(); // a hung answer's socket too
    });
  return state;
}
