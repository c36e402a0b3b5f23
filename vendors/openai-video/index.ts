import { Type } from '@sinclair/typebox';
import {
  type VendorInstance,
  type VideoCancelInput,
  type VideoGenerateImpl,
  type VideoPollInput,
  type VideoPollOutput,
  VendorFailure,
  bearerApi,
  defineVendor,
  planOf,
  secret,
  videoPrice,
} from '../../core/kit/vendor.js';
import { OPENAI_VIDEO_MODELS, soraSize } from './models.js';

/** OpenAI's Video object, the fields read here. */
interface SoraVideo {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress?: number;
  seconds?: string;
  error?: { code?: string; message?: string } | null;
}

/**
 * Sora over OpenAI's Videos API: `POST /videos` (multipart: prompt, model, seconds, size and the
 * reference image as `input_reference`), `GET /videos/{id}` to poll, `GET /videos/{id}/content`
 * (and `?variant=thumbnail`) for the bytes, `DELETE /videos/{id}` to drop a job nobody pays for.
 */
export default defineVendor({
  name: 'openai-video',
  regions: ['western'],
  configSchema: Type.Object(
    {
      api_key: secret(Type.String({ minLength: 1, description: 'OpenAI API key with access to the Videos API.' })),
      base_url: Type.String({ default: 'https://api.openai.com/v1' }),
      organization: Type.Optional(Type.String({ minLength: 1 })),
    },
    { additionalProperties: false }
  ),
  create(config, ctx): VendorInstance {
    const name = 'openai-video';
    const org = config.organization ? { 'openai-organization': config.organization } : undefined;
    const api = bearerApi(ctx.fetch, config.base_url, name, config.api_key, org);
    const content = async (id: string, variant: string, signal: AbortSignal, creds?: Record<string, string>) => {
      const res = await api.call(`/videos/${encodeURIComponent(id)}/content?variant=${variant}`, { signal }, creds);
      const type = res.headers.get('content-type')?.split(';')[0] ?? (variant === 'video' ? 'video/mp4' : 'image/webp');
      return { data: Buffer.from(await res.arrayBuffer()), content_type: type };
    };
    const generate: VideoGenerateImpl = {
      videoModels: OPENAI_VIDEO_MODELS,
      models: OPENAI_VIDEO_MODELS.map((m) => m.id),
      async invoke(input, opts) {
        const plan = planOf(opts.plan, ctx.instanceId);
        const form = new FormData();
        form.set('prompt', input.prompt);
        form.set('model', plan.model);
        form.set('seconds', String(plan.seconds));
        form.set('size', soraSize(input.resolution, input.aspect));
        const img = input.reference_image;
        if (img) {
          const blob = new Blob([Buffer.from(img.data, 'base64')], { type: img.content_type });
          form.set('input_reference', blob, `reference.${img.content_type.split('/')[1]}`);
        }
        const v = await api.json<SoraVideo>(
          '/videos',
          { method: 'POST', body: form, signal: opts.signal },
          opts.credentials
        );
        if (typeof v.id !== 'string' || !v.id) throw new VendorFailure('unavailable', `${name} answered without an id`);
        return { vendor_job_id: v.id };
      },
      price: (_input, usage, plan) => videoPrice(plan, usage),
    };
    return {
      capabilities: {
        'video.generate': generate,
        'video.poll': {
          async invoke(input: VideoPollInput, { signal }): Promise<VideoPollOutput> {
            const creds = input.credentials;
            const path = `/videos/${encodeURIComponent(input.vendor_job_id)}`;
            const v = await api.json<SoraVideo>(path, { signal }, creds);
            if (v.status === 'failed')
              return { status: 'failed', error: v.error?.message ?? v.error?.code ?? 'the video failed' };
            if (v.status !== 'completed') return { status: 'running', progress: v.progress };
            return {
              status: 'succeeded',
              video: await content(v.id, 'video', signal, creds),
              thumbnail: await content(v.id, 'thumbnail', signal, creds),
              seconds: Number(v.seconds) || input.request.seconds,
            };
          },
          price: () => 0,
        },
        'video.cancel': {
          async invoke(input: VideoCancelInput, { signal }) {
            const path = `/videos/${encodeURIComponent(input.vendor_job_id)}`;
            const r = await api.json<{ deleted?: boolean }>(path, { method: 'DELETE', signal }, input.credentials);
            return { vendor_status: r.deleted ? 'deleted' : 'not deleted' };
          },
          price: () => 0,
        },
      },
    };
  },
});
