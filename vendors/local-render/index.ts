import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import {
  VIDEO_ASPECTS,
  type VideoCancelInput,
  type VideoGenerateImpl,
  type VideoModel,
  type VideoPollInput,
  type VendorInstance,
  defineVendor,
  planOf,
  usdMicros,
  videoPrice,
} from '../../core/kit/vendor.js';
import { checkFfmpeg, findFfmpeg } from './ffmpeg.js';
import { Renders } from './renders.js';

/**
 * The embedded video engine of a laptop with no video vendor: a real MP4 made by ffmpeg in a
 * child process (a title card of the prompt, then the reference image with a slow zoom and pan,
 * at the asked aspect, resolution and length) and a thumbnail, so a job's whole lifecycle runs
 * offline. Its results say they are placeholders. A stand-in: automatic routing takes it only
 * while no other vendor serves video. Without ffmpeg it serves nothing (503 no_vendor_available).
 */
export default defineVendor({
  name: 'local-render',
  embedded: true,
  standIn: true,
  regions: ['global'],
  configSchema: Type.Object(
    {
      ffmpeg_path: Type.String({
        default: '',
        description: 'The ffmpeg binary; empty: ffmpeg on PATH. A path given must exist.',
      }),
      concurrency: Type.Integer({
        minimum: 1,
        maximum: 16,
        default: 2,
        description: 'Renders at once (one a account).',
      }),
      timeout_seconds: Type.Integer({
        minimum: 1,
        maximum: 3600,
        default: 300,
        description: 'Longest one ffmpeg run may take; past it the render fails.',
      }),
      fps: Type.Integer({ minimum: 1, maximum: 60, default: 24 }),
      price_per_second_usd: Type.Number({
        minimum: 0,
        default: 0,
        description: 'Charged a second of placeholder video (before wallet.markup).',
      }),
      keep_hours: Type.Number({
        minimum: 0,
        default: 24,
        description: 'Render directories (under data_dir/local-render) are removed this long after they were made.',
      }),
    },
    { additionalProperties: false, default: {} }
  ),
  create(config, ctx): VendorInstance {
    const ffmpeg = config.ffmpeg_path ? checkFfmpeg(config.ffmpeg_path) : findFfmpeg();
    if (!ffmpeg) {
      ctx.log.warn('no ffmpeg found: local-render is off. Install it (Debian/Ubuntu: apt-get install -y ffmpeg).');
      return { capabilities: {} };
    }
    const price = usdMicros(config.price_per_second_usd);
    const model: VideoModel = {
      id: 'placeholder',
      quality: 1,
      price_per_second: { '720p': price, '1080p': price },
      aspects: [...VIDEO_ASPECTS],
      durations: Array.from({ length: 60 }, (_, i) => i + 1),
    };
    const renders = new Renders(
      join(ctx.dataDir, 'local-render'),
      { ffmpeg, fps: config.fps, timeoutMs: config.timeout_seconds * 1000 },
      config.concurrency,
      config.keep_hours * 3_600_000,
      ctx.log
    );
    const generate: VideoGenerateImpl = {
      videoModels: [model],
      models: [model.id],
      invoke: async (input, opts) => ({
        vendor_job_id: await renders.submit(input, planOf(opts.plan, ctx.instanceId).seconds, opts.accountId ?? ''),
      }),
      price: (_input, usage, plan) => videoPrice(plan, usage),
    };
    return {
      capabilities: {
        'video.generate': generate,
        'video.poll': { invoke: (input: VideoPollInput) => renders.poll(input), price: () => 0 },
        'video.cancel': {
          invoke: async (input: VideoCancelInput) => ({ vendor_status: await renders.cancel(input.vendor_job_id) }),
          price: () => 0,
        },
      },
      close: () => renders.close(),
    };
  },
});
