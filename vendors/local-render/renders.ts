import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  FairQueue,
  type Logger,
  type VideoPollInput,
  type VideoPollOutput,
  type VideoSubmitInput,
  VendorFailure,
} from '../../core/kit/vendor.js';
import { type RenderSettings, type RenderSpec, THUMBNAIL_FILE, VIDEO_FILE, renderPlaceholder } from './render.js';

interface Running {
  ctrl: AbortController;
  error?: string;
}

const ID = /^lr_[A-Za-z0-9_-]{1,100}$/;

/**
 * The renders of one local-render instance: each in a directory of its own under the data dir
 * (its request, its reference image, then its video and thumbnail), rendered on a queue fair per
 * account. The directory is the state: after a restart a poll finds the finished video there, or
 * starts the render over from the request it kept.
 */
export class Renders {
  private readonly running = new Map<string, Running>();
  private readonly queue: FairQueue;

  constructor(
    private readonly root: string,
    private readonly s: RenderSettings,
    concurrency: number,
    private readonly keepMs: number,
    private readonly log: Logger
  ) {
    this.queue = new FairQueue({ concurrency, perAccount: 1 });
  }

  private dir(id: string): string {
    if (!ID.test(id)) throw new VendorFailure('client_error', `${id} is not a local-render job`);
    return join(this.root, id);
  }

  async submit(input: VideoSubmitInput, seconds: number, accountId: string): Promise<string> {
    const id = `lr_${input.job_id}`;
    const dir = this.dir(id);
    // The same job submitted again (a retry after a crash) is the render already there.
    if (this.running.has(id) || existsSync(join(dir, 'request.json'))) return id;
    await mkdir(dir, { recursive: true });
    const img = input.reference_image;
    const spec: RenderSpec = { prompt: input.prompt, seconds, aspect: input.aspect, resolution: input.resolution };
    if (img) {
      spec.image = join(dir, `reference.${img.content_type.split('/')[1]}`);
      await writeFile(spec.image, Buffer.from(img.data, 'base64'));
    }
    await writeFile(join(dir, 'request.json'), JSON.stringify({ ...spec, accountId }));
    this.start(id, spec, accountId);
    void this.sweep();
    return id;
  }

  private start(id: string, spec: RenderSpec, accountId: string): void {
    const dir = this.dir(id);
    const entry: Running = { ctrl: new AbortController() };
    this.running.set(id, entry);
    const work = (signal: AbortSignal) => renderPlaceholder(dir, spec, this.s, signal);
    this.queue
      .add(accountId, work, { signal: entry.ctrl.signal })
      .then(() => rename(join(dir, `partial-${VIDEO_FILE}`), join(dir, VIDEO_FILE)))
      .then(() => this.running.delete(id))
      .catch((e: Error) => {
        entry.error = e.message;
        if (!entry.ctrl.signal.aborted) this.log.warn({ render: id, error: e.message }, 'placeholder render failed');
      });
  }

  async poll(input: VideoPollInput): Promise<VideoPollOutput> {
    const dir = this.dir(input.vendor_job_id);
    if (existsSync(join(dir, VIDEO_FILE))) {
      const [video, thumbnail] = await Promise.all([
        readFile(join(dir, VIDEO_FILE)),
        readFile(join(dir, THUMBNAIL_FILE)),
      ]);
      return {
        status: 'succeeded',
        video: { data: video, content_type: 'video/mp4' },
        thumbnail: { data: thumbnail, content_type: 'image/jpeg' },
        seconds: input.request.seconds,
        placeholder: true,
      };
    }
    const entry = this.running.get(input.vendor_job_id);
    if (entry?.error) return { status: 'failed', error: entry.error };
    if (entry) return { status: 'running' };
    // Lost with a restart: render again from the request the directory kept.
    const saved = await readFile(join(dir, 'request.json'), 'utf8').catch(() => undefined);
    if (!saved) return { status: 'failed', error: `render ${input.vendor_job_id} is unknown here` };
    const { accountId, ...spec } = JSON.parse(saved) as RenderSpec & { accountId: string };
    this.start(input.vendor_job_id, spec, accountId);
    return { status: 'running' };
  }

  async cancel(id: string): Promise<string> {
    const dir = this.dir(id);
    this.running.get(id)?.ctrl.abort();
    this.running.delete(id);
    await rm(dir, { recursive: true, force: true });
    return 'canceled';
  }

  /** Directories of renders older than keepMs: their videos are in the result store by then. */
  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.root).catch(() => [] as string[])) {
      if (this.running.has(name)) continue;
      const at = await stat(join(this.root, name)).catch(() => undefined);
      if (at && now - at.mtimeMs > this.keepMs) await rm(join(this.root, name), { recursive: true, force: true });
    }
  }

  close(): void {
    for (const r of this.running.values()) r.ctrl.abort();
    this.running.clear();
  }
}
