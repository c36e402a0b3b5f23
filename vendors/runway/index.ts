import { Type } from '@sinclair/typebox';
import {
  type VendorInstance,
  type VideoAspect,
  type VideoCancelInput,
  type VideoGenerateImpl,
  type VideoModel,
  type VideoPollInput,
  type VideoPollOutput,
  VendorFailure,
  bearerApi,
  defineVendor,
  downloadAsset,
  planOf,
  secret,
  usdMicros,
  videoPrice,
} from '../../core/kit/vendor.js';

// gen4_turbo animates an image (it cannot start from text alone): 5 credits a second at
// 0.01 USD a credit, 720p, 5 or 10 s.
const MODELS: VideoModel[] = [
  {
    id: 'gen4_turbo',
    quality: 80,
    price_per_second: { '720p': usdMicros(0.05) },
    aspects: ['16:9', '9:16', '1:1'],
    durations: [5, 10],
    needs_image: true,
  },
];
const RATIO: Record<VideoAspect, string> = { '16:9': '1280:720', '9:16': '720:1280', '1:1': '960:960' };
const API_VERSION = '2024-11-06';

interface RunwayTask {
  id: string;
  status: 'PENDING' | 'THROTTLED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  output?: string[];
  failure?: string;
  failureCode?: string;
  progress?: number;
}

/**
 * Runway's developer API: `POST /v1/image_to_video` (the reference image as a data URI),
 * `GET /v1/tasks/{id}` until SUCCEEDED (its `output` URLs are fetched here), and
 * `DELETE /v1/tasks/{id}` to cancel a task. Every request carries `X-Runway-Version`.
 */
export default defineVendor({
  name: 'runway',
  regions: ['western'],
  configSchema: Type.Object(
    {
      api_key: secret(Type.String({ minLength: 1, description: 'Runway API secret.' })),
      base_url: Type.String({ default: 'https://api.dev.runwayml.com' }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx): VendorInstance {
    const name = 'runway';
    const api = bearerApi(ctx.fetch, config.base_url, name, config.api_key, {
      'x-runway-version': API_VERSION,
      'content-type': 'application/json',
    });
    const generate: VideoGenerateImpl = {
      videoModels: MODELS,
      models: MODELS.map((m) => m.id),
      async invoke(input, opts) {
        const plan = planOf(opts.plan, ctx.instanceId);
        const img = input.reference_image;
        if (!img) throw new VendorFailure('client_error', `${name}: ${plan.model} needs a reference image`);
        const body = {
          model: plan.model,
          promptImage: `data:${img.content_type};base64,${img.data}`,
          promptText: input.prompt.slice(0, 1000),
          ratio: RATIO[input.aspect],
          duration: plan.seconds,
        };
        const init = { method: 'POST', body: JSON.stringify(body), signal: opts.signal };
        const { id } = await api.json<{ id?: string }>('/v1/image_to_video', init, opts.credentials);
        if (typeof id !== 'string' || !id) throw new VendorFailure('unavailable', `${name} answered without a task id`);
        return { vendor_job_id: id };
      },
      price: (_input, usage, plan) => videoPrice(plan, usage),
    };
    return {
      capabilities: {
        'video.generate': generate,
        'video.poll': {
          async invoke(input: VideoPollInput, { signal }): Promise<VideoPollOutput> {
            const path = `/v1/tasks/${encodeURIComponent(input.vendor_job_id)}`;
            const task = await api.json<RunwayTask>(path, { signal }, input.credentials);
            if (task.status === 'FAILED' || task.status === 'CANCELLED')
              return { status: 'failed', error: task.failure ?? task.failureCode ?? task.status.toLowerCase() };
            if (task.status !== 'SUCCEEDED') return { status: 'running', progress: task.progress };
            const url = task.output?.[0];
            if (!url) throw new VendorFailure('unavailable', `${name}: task ${task.id} succeeded without an output`);
            const video = await downloadAsset(ctx.fetch, url, signal, name, 'video/mp4');
            return { status: 'succeeded', video, seconds: input.request.seconds };
          },
          price: () => 0,
        },
        'video.cancel': {
          async invoke(input: VideoCancelInput, { signal }) {
            const path = `/v1/tasks/${encodeURIComponent(input.vendor_job_id)}`;
            await api.call(path, { method: 'DELETE', signal }, input.credentials);
            return { vendor_status: 'cancelled' };
          },
          price: () => 0,
        },
      },
    };
  },
});
