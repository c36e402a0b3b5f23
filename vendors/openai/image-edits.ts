import {
  type CapabilityImpl,
  type VendorContext,
  imagePrice,
  planOf,
  type CandidatePlan,
  type ImageEditInput,
  type ImageFile,
  type ImageOutput,
  type ImageVariationInput,
  vendorFetch,
  readJson,
  joinUrl,
} from '../../core/kit/vendor.js';
import { openAiHeaders, type OpenAiClientConfig } from './client.js';
import { imagesResponse } from './images.js';

// OpenAI's Images API for uploads: POST /images/edits and /images/variations take
// multipart/form-data and answer as /images/generations does ({ created, data: [{ b64_json }] }).

const blob = (f: ImageFile) => new Blob([new Uint8Array(f.data)], { type: f.mime });

/** The instance's (or the caller's BYOK) auth headers; fetch sets the multipart content type with its boundary. */
function authHeaders(cfg: OpenAiClientConfig, creds?: Record<string, string>): Record<string, string> {
  const { 'content-type': _json, ...rest } = openAiHeaders(cfg, creds);
  return rest;
}

/**
 * The edit form as OpenAI's SDK sends it: one image as `image`, several as repeated `image[]`.
 * gpt-image models answer base64 only and reject response_format; DALL·E is asked for base64.
 */
export function editForm(input: ImageEditInput, model: string): FormData {
  const form = new FormData();
  const key = input.images.length > 1 ? 'image[]' : 'image';
  for (const img of input.images) form.append(key, blob(img), img.filename);
  if (input.mask) form.append('mask', blob(input.mask), input.mask.filename);
  form.append('prompt', input.prompt);
  form.append('model', model);
  form.append('n', String(input.n));
  if (input.size) form.append('size', input.size);
  // The catalog prices gpt-image at `medium`, as for generations.
  if (model.startsWith('gpt-image')) form.append('quality', 'medium');
  else form.append('response_format', 'b64_json');
  return form;
}

export function variationForm(input: ImageVariationInput, model: string): FormData {
  const form = new FormData();
  form.append('image', blob(input.image), input.image.filename);
  form.append('model', model);
  form.append('n', String(input.n));
  if (input.size) form.append('size', input.size);
  form.append('response_format', 'b64_json');
  return form;
}

/** `ai.image.edit` and `ai.image.variation` on an OpenAI instance, priced per image from the plan. */
export function openAiImageUploads(
  cfg: OpenAiClientConfig,
  ctx: VendorContext
): {
  'ai.image.edit': CapabilityImpl<ImageEditInput, ImageOutput, CandidatePlan>;
  'ai.image.variation': CapabilityImpl<ImageVariationInput, ImageOutput, CandidatePlan>;
} {
  const id = ctx.instanceId;
  const models = cfg.models?.length ? cfg.models : undefined;
  // Both are the same call: a form posted to a path, the images read from the answer.
  const upload = <I extends { n: number }>(
    path: string,
    form: (input: I, model: string) => FormData
  ): CapabilityImpl<I, ImageOutput, CandidatePlan> => ({
    models,
    async invoke(input, opts) {
      const p = planOf(opts.plan, id);
      const res = await vendorFetch(
        ctx.fetch,
        joinUrl(cfg.base_url, path),
        { method: 'POST', headers: authHeaders(cfg, p.credentials), body: form(input, p.model), signal: opts.signal },
        id
      );
      return imagesResponse(await readJson(res, id), p.model, id);
    },
    price: (input, out, plan) => imagePrice(plan, input.n, out),
  });
  return {
    'ai.image.edit': upload('/images/edits', editForm),
    'ai.image.variation': upload('/images/variations', variationForm),
  };
}
