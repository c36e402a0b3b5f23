import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { THUMB_JPEG, testMp4 } from './video-fixture.js';

// Fakes of Runway's (POST /v1/image_to_video, GET and DELETE /v1/tasks/{id}) and Luma's
// (POST /generations, GET and DELETE /generations/{id}) job APIs, with their status words and
// error bodies. Finished videos are served from the same server, as a vendor's CDN would.

export interface FakeJob {
  id: string;
  body: Record<string, any>;
  headers: Record<string, string | string[] | undefined>;
  polls: number;
  deleted: boolean;
}

interface Common {
  jobs: Map<string, FakeJob>;
  pollsUntilDone: number;
  fail: boolean;
  submitStatus: number[];
  deletes: string[];
  url: string;
  close: () => Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Record<string, any>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString() || '{}');
}

const json = (res: ServerResponse, status: number, v: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));

/** The size a fake renders: Runway's ratio, or Luma's resolution and aspect. */
function size(job: FakeJob): [number, number] {
  if (job.body.ratio) return job.body.ratio.split(':').map(Number) as [number, number];
  const short = job.body.resolution === '4k' ? 216 : job.body.resolution === '1080p' ? 108 : 72;
  const long = Math.round((short * 16) / 9);
  return job.body.aspect_ratio === '1:1'
    ? [short, short]
    : job.body.aspect_ratio === '9:16'
      ? [short, long]
      : [long, short];
}

async function fake(
  prefix: string,
  routes: { submit: string; item: RegExp },
  wire: (s: Common, job: FakeJob, done: boolean) => unknown,
  errorBody: (message: string) => unknown
): Promise<Common> {
  const state: Common = {
    jobs: new Map(),
    pollsUntilDone: 1,
    fail: false,
    submitStatus: [],
    deletes: [],
    url: '',
    close: async () => {},
  };
  let seq = 0;
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const asset = path.match(/^\/assets\/([^/]+)\.(mp4|jpg)$/);
    if (asset) {
      const job = state.jobs.get(asset[1])!;
      if (asset[2] === 'jpg') return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(THUMB_JPEG);
      const [w, h] = size(job);
      const seconds = Number(String(job.body.duration).replace('s', ''));
      return res.writeHead(200, { 'content-type': 'video/mp4' }).end(testMp4(w, h, seconds));
    }
    if (req.method === 'POST' && path === routes.submit) {
      const status = state.submitStatus.shift();
      if (status) return json(res, status, errorBody('Internal error'));
      const job: FakeJob = {
        id: `${prefix}${++seq}`,
        body: await readBody(req),
        headers: req.headers,
        polls: 0,
        deleted: false,
      };
      state.jobs.set(job.id, job);
      return json(res, 200, { id: job.id, ...(wire(state, job, false) as object) });
    }
    const m = path.match(routes.item);
    const job = m ? state.jobs.get(m[1]) : undefined;
    if (!job || job.deleted) return json(res, 404, errorBody('Not found'));
    if (req.method === 'DELETE') {
      state.deletes.push(job.id);
      job.deleted = true;
      return res.writeHead(204).end();
    }
    job.polls++;
    return json(res, 200, wire(state, job, job.polls >= state.pollsUntilDone));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((r) => server.close(() => r()));
  return state;
}

export function runwayFake() {
  return fake(
    'task-',
    { submit: '/v1/image_to_video', item: /^\/v1\/tasks\/([^/]+)$/ },
    (s, job, done) => ({
      id: job.id,
      createdAt: '2026-01-01T00:00:00.000Z',
      status: !done ? 'RUNNING' : s.fail ? 'FAILED' : 'SUCCEEDED',
      ...(done && !s.fail ? { output: [`${s.url}/assets/${job.id}.mp4`] } : {}),
      ...(done && s.fail ? { failure: 'Content moderation', failureCode: 'SAFETY.INPUT.TEXT' } : {}),
      ...(!done ? { progress: 0.5 } : {}),
    }),
    (message) => ({ error: message })
  );
}

export function lumaFake() {
  return fake(
    'gen-',
    { submit: '/generations', item: /^\/generations\/([^/]+)$/ },
    (s, job, done) => ({
      id: job.id,
      generation_type: 'video',
      state: !done ? 'dreaming' : s.fail ? 'failed' : 'completed',
      failure_reason: done && s.fail ? 'The prompt was rejected' : null,
      created_at: '2026-01-01T00:00:00.000Z',
      assets:
        done && !s.fail ? { video: `${s.url}/assets/${job.id}.mp4`, image: `${s.url}/assets/${job.id}.jpg` } : null,
      model: job.body.model,
      request: job.body,
    }),
    (message) => ({ detail: message })
  );
}
