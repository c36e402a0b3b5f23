import { defineArea, VIDEO_CAPABILITIES, type RegisteredInstance } from '../../core/kit/area.js';
import { VideoConfig } from './config.js';
import { videoMigrations } from './migrations.js';
import { GENERATE, modelsOf, videoPlanner } from './planner.js';
import { registerVideoRoutes } from './routes.js';
import { failVideo, videoJobHandler } from './runner.js';
import { VideoStore } from './store.js';
import { VIDEO_JOB, type VideoDeps } from './submit.js';

/** The cheapest second an instance makes (its 720p where it has one), for discovery's price. */
function listPrice(inst: RegisteredInstance) {
  const prices = modelsOf(inst).flatMap((m) => Object.values(m.price_per_second));
  return prices.length ? { unit: 'second', micros: Math.min(...prices) } : null;
}

/** AI video: text-to-video jobs on the jobs engine, routed across video vendors, paid on success. */
export default defineArea({
  name: 'video',
  configSchema: VideoConfig,
  capabilities: VIDEO_CAPABILITIES,
  migrations: videoMigrations,
  register(app, ctx) {
    const svc = ctx.svc;
    svc.capabilities.set(GENERATE, { ...VIDEO_CAPABILITIES[GENERATE], listPrice });
    svc.router.planner(GENERATE, videoPlanner, {
      docs: 'docs/video.md',
      hint: 'On a laptop, install ffmpeg (Debian/Ubuntu: apt-get install -y ffmpeg) for local-render placeholders.',
    });
    const d: VideoDeps = { svc, cfg: ctx.config, store: new VideoStore(svc.db), log: ctx.log };
    svc.jobs.register(VIDEO_JOB, videoJobHandler(d), {
      // Its last attempt died with its node: the job must not wait forever holding money.
      onExhausted: async (_id, p: { job_id: string }, error) => failVideo(d, p.job_id, error),
    });
    svc.retention.add({
      name: 'video_jobs',
      days: ctx.config.retention_days,
      sweep: (before, limit) => d.store.sweep(before, limit),
    });
    registerVideoRoutes(app, d);
  },
});
