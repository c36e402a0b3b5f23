import { Type } from '@sinclair/typebox';
import {
  type VendorInstance,
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

// Ray through Luma's Dream Machine API, a second at each resolution (Luma bills by pixels and
// length; these are its list prices for 5-s clips divided by 5). The only vendor here with 4k.
const MODELS: VideoModel[] = [
  {
    id: 'ray-2',
    quality: 85,
    price_per_second: { '720p': usdMicros(0.14), '1080p': usdMicros(0.32), '4k': usdMicros(0.64) },
    aspects: ['16:9', '9:16', '1:1'],
    durations: [5, 9],
  },
  {
    id: 'ray-flash-2',
    quality: 70,
    price_per_second: { '720p': usdMicros(0.05), '1080p': usdMicros(0.11), '4k': usdMicros(0.22) },
    aspects: ['16:9', '9:16', '1:1'],
    durations: [5, 9],
  },
];

interface Generation {
  id: string;
  state: 'queued' | 'dreaming' | 'completed' | 'failed';
  failure_reason?: string | null;
  assets?: { video?: string | null; image?: string | null } | null;
}

/**
 * Luma's Dream Machine API: `POST /generations` (the reference image as keyframe `frame0`, by
 * its URL, which Luma fetches itself), `GET /generations/{id}` until `completed` (its
 * `assets.video` and `assets.image` are fetched here), `DELETE /generations/{id}` on cancel.
 */
export default defineVendor({
  name: 'luma',
  regions: ['western'],
  configSchema: Type.Object(
    {
      api_key: secret(Type.String({ minLength: 1, description: 'Luma API key.' })),
      base_url: Type.String({ default: 'https://api.lumalabs.ai/dream-machine/v1' }),
    },
    { additionalProperties: false }
  ),
  create(config, ctx): VendorInstance {
    const name = 'luma';
    const api = bearerApi(ctx.fetch, config.base_url, name, config.api_key, {
      'content-type': 'application/json',
      accept: 'application/json',
    });
    const generate: VideoGenerateImpl = {
      videoModels: MODELS,
      models: MODELS.map((m) => m.id),
      async invoke(input, opts) {
        const plan = planOf(opts.plan, ctx.instanceId);
        const img = input.reference_image;
        const body = {
          prompt: input.prompt,
          model: plan.model,
          aspect_ratio: input.aspect,
          resolution: input.resolution,
          duration: `${plan.seconds}s`,
          ...(img ? { keyframes: { frame0: { type: 'image', url: img.url } } } : {}),
        };
        const init = { method: 'POST', body: JSON.stringify(body), signal: opts.signal };
        const g = await api.json<Partial<Generation>>('/generations', init, opts.credentials);
        if (typeof g.id !== 'string' || !g.id) throw new VendorFailure('unavailable', `${name} answered without an id`);
        return { vendor_job_id: g.id };
      },
      price: (_input, usage, plan) => videoPrice(plan, usage),
    };
    return {
      capabilities: {
        'video.generate': generate,
        'video.poll': {
          async invoke(input: VideoPollInput, { signal }): Promise<VideoPollOutput> {
            const path = `/generations/${encodeURIComponent(input.vendor_job_id)}`;
            const g = await api.json<Generation>(path, { signal }, input.credentials);
            if (g.state === 'failed') return { status: 'failed', error: g.failure_reason ?? 'the generation failed' };
            if (g.state !== 'completed') return { status: 'running' };
            if (!g.assets?.video) throw new VendorFailure('unavailable', `${name}: ${g.id} completed without a video`);
            const video = await downloadAsset(ctx.fetch, g.assets.video, signal, name, 'video/mp4');
            const thumbnail = g.assets.image
              ? await downloadAsset(ctx.fetch, g.assets.image, signal, name, 'image/jpeg')
              : undefined;
            return { status: 'succeeded', video, ...(thumbnail ? { thumbnail } : {}), seconds: input.request.seconds };
          },
          price: () => 0,
        },
        'video.cancel': {
          async invoke(input: VideoCancelInput, { signal }) {
            const path = `/generations/${encodeURIComponent(input.vendor_job_id)}`;
            await api.call(path, { method: 'DELETE', signal }, input.credentials);
            return { vendor_status: 'deleted' };
          },
          price: () => 0,
        },
      },
    };
  },
});
