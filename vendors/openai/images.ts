import {
  type CapabilityImpl,
  type VendorContext,
  VendorFailure,
  imagePrice,
  planOf,
  type CandidatePlan,
  type ImageInput,
  type ImageOutput,
  vendorFetch,
  readJson,
  joinUrl,
} from '../../core/kit/vendor.js';
import { openAiHeaders, type OpenAiClientConfig } from './client.js';

// OpenAI's Images API: POST /images/generations -> { created, data: [{ b64_json } | { url }] }.

/** The request body: gpt-image models always answer base64 and reject response_format; DALL·E is asked for base64. */
export function imagesRequest(input: ImageInput, model: string): Record<string, unknown> {
  const gptImage = model.startsWith('gpt-image');
  return {
    model,
    prompt: input.prompt,
    n: input.n,
    ...(input.size ? { size: input.size } : {}),
    // The catalog prices gpt-image at `medium`: ask for it so the reservation holds.
    ...(gptImage ? { quality: 'medium' } : { response_format: 'b64_json' }),
  };
}

interface ImagesResponse {
  data?: Array<{ b64_json?: string; url?: string }>;
  output_format?: string;
}

const MIME: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

export function imagesResponse(j: ImagesResponse, model: string, vendor: string): ImageOutput {
  if (!Array.isArray(j.data) || !j.data.length)
    throw new VendorFailure('unavailable', `${vendor} answered without images`);
  const mime = MIME[j.output_format ?? 'png'] ?? 'image/png';
  return {
    model,
    images: j.data.map((d, i) => {
      if (typeof d.b64_json !== 'string')
        throw new VendorFailure('unavailable', `${vendor} answered image ${i} without b64_json`);
      return { data: Buffer.from(d.b64_json, 'base64'), mime };
    }),
  };
}

/** `ai.image` on an OpenAI instance, priced per image from the plan. */
export function openAiImages(
  cfg: OpenAiClientConfig,
  ctx: VendorContext
): CapabilityImpl<ImageInput, ImageOutput, CandidatePlan> {
  const id = ctx.instanceId;
  return {
    models: cfg.models?.length ? cfg.models : undefined,
    async invoke(input, opts) {
      const p = planOf(opts.plan, id);
      const res = await vendorFetch(
        ctx.fetch,
        joinUrl(cfg.base_url, '/images/generations'),
        {
          method: 'POST',
          headers: openAiHeaders(cfg, p.credentials),
          body: JSON.stringify(imagesRequest(input, p.model)),
          signal: opts.signal,
        },
        id
      );
      return imagesResponse(await readJson(res, id), p.model, id);
    },
    price: (input, out, plan) => imagePrice(plan, input.n, out),
  };
}
