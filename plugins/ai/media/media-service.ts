import type { FastifyRequest } from 'fastify';
import type {
  Svc,
  CallResult,
  StreamSession,
  ChatInput,
  ChatOutput,
  ChatStreamEvent,
  Usage,
  ImageEditInput,
  ImageFile,
  ImageInput,
  ImageOutput,
  ImageVariationInput,
} from '../../../core/kit/area.js';
import type { ChatResultT } from '../schemas.js';
import { prepared, type AiService, type ChatRequest, type Prepared } from '../service.js';
import { resolveImages, sniffImage, type ImageRef, type ParamOf } from './image-input.js';
import type { ImageBodyT, ImageEditBodyT, ImageResultT, ImageVariationBodyT, VisionBodyT } from './schemas.js';
import { imageFile, MAX_MASK_BYTES } from './image-files.js';

/**
 * Input tokens reserved for each image of a vision call. Vendors bill an image by its pixels
 * (OpenAI ≤ ~1,500 at high detail, Anthropic ~1,600 at its largest size); the reservation
 * is this bound, the settlement the vendor's actual count.
 */
export const VISION_TOKENS_PER_IMAGE = 1600;

/** Image models take tens of seconds an image: the whole call (failover included) gets longer than chat's 60 s. */
export const IMAGE_TIMEOUT_MS = 180_000;

/** One image of a vision chat: the message it belongs to, and its request field for errors. */
export interface ImageSource {
  message: number;
  ref: ImageRef;
  param(field?: 'url' | 'base64'): string;
}

/** Routing and answer options every image endpoint shares. */
export type ImageUploadOptions = Pick<ImageBodyT, 'n' | 'size' | 'model' | 'vendor' | 'prefer' | 'response_format'>;

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

/** Vision (chat about images) and image generation, routed and charged like chat. */
export class MediaService {
  constructor(
    private readonly svc: Svc,
    private readonly ai: AiService
  ) {}

  private async call<I, O>(
    capability: string,
    req: FastifyRequest,
    p: Prepared<I>,
    timeoutMs?: number
  ): Promise<CallResult<O>> {
    try {
      return await this.svc.router.call<I, O>(capability, p.input, {
        ...this.ai.callOptions(req, p.candidates, {}),
        ...(timeoutMs ? { timeoutMs } : {}),
      });
    } catch (e) {
      throw this.ai.withModels(e, p);
    }
  }

  async vision(req: FastifyRequest, body: VisionBodyT): Promise<ChatResultT> {
    return this.visionChat(
      req,
      {
        messages: [{ role: 'user', content: body.prompt }],
        model: body.model,
        vendor: body.vendor,
        max_tokens: body.max_tokens,
      },
      body.images.map((ref, i) => ({ message: 0, ref, param: (field) => `images[${i}]${field ? `.${field}` : ''}` }))
    );
  }

  /** A chat whose turns carry images (the native vision body, or an OpenAI chat with image parts), on `ai.vision`. */
  async visionChat(req: FastifyRequest, body: ChatRequest, images: ImageSource[]): Promise<ChatResultT> {
    const p = await this.prepareVision(req, body, images, 'ai.vision');
    const started = performance.now();
    const r = await this.call<ChatInput, ChatOutput>('ai.vision', req, p);
    return this.ai.chatResult(p, r, started);
  }

  /** The same chat streamed from the vendor (`ai.vision.stream`), with failover before the first token as for chat. */
  async visionStream(
    req: FastifyRequest,
    body: ChatRequest,
    images: ImageSource[]
  ): Promise<{ p: Prepared<ChatInput>; session: StreamSession<ChatStreamEvent, Usage> }> {
    const p = await this.prepareVision(req, body, images, 'ai.vision.stream');
    return { p, session: await this.ai.startStream(req, p, body, 'ai.vision.stream') };
  }

  private async prepareVision(
    req: FastifyRequest,
    body: ChatRequest,
    images: ImageSource[],
    capability: 'ai.vision' | 'ai.vision.stream'
  ): Promise<Prepared<ChatInput>> {
    // Routing first: with no vision vendor, nothing is fetched.
    const p = await this.ai.prepareChat(
      req,
      { ...body, cache_strategy: 'none' },
      capability === 'ai.vision.stream',
      capability
    );
    const inline = await resolveImages(
      images.map((i) => i.ref),
      this.svc.egress,
      (i, field) => images[i].param(field)
    );
    const messages = p.input.messages.map((m) => ({ ...m }));
    for (const [i, img] of inline.entries()) (messages[images[i].message].images ??= []).push(img);
    p.input.messages = messages;
    p.input.estimate.input_tokens += inline.length * VISION_TOKENS_PER_IMAGE;
    return p;
  }

  async image(req: FastifyRequest, body: ImageBodyT): Promise<ImageResultT> {
    return this.makeImages<ImageInput>(req, 'ai.image', body, {
      prompt: body.prompt,
      n: body.n ?? 1,
      ...(body.size ? { size: body.size } : {}),
    });
  }

  /** Edits of uploaded images (`ai.image.edit`); the files were checked by the route. */
  async editImage(
    req: FastifyRequest,
    body: ImageUploadOptions & { prompt: string; images: ImageFile[]; mask?: ImageFile }
  ): Promise<ImageResultT> {
    return this.makeImages<ImageEditInput>(req, 'ai.image.edit', body, {
      prompt: body.prompt,
      n: body.n ?? 1,
      ...(body.size ? { size: body.size } : {}),
      images: body.images,
      ...(body.mask ? { mask: body.mask } : {}),
    });
  }

  /** The native edit: routed first (no edit vendor, nothing fetched), then the ImageRefs fetched or decoded and checked as uploads are. */
  async editImageRefs(req: FastifyRequest, body: ImageEditBodyT): Promise<ImageResultT> {
    const { images: refs, mask: maskRef, prompt, idempotency_key: _key, ...opts } = body;
    return this.makeImages<ImageEditInput>(req, 'ai.image.edit', opts, async () => {
      const images = await this.imageFiles(refs, (i, field) => `images[${i}]${field ? `.${field}` : ''}`);
      const mask = maskRef
        ? (
            await this.imageFiles([maskRef], (_i, field) => `mask${field ? `.${field}` : ''}`, {
              maxBytes: MAX_MASK_BYTES,
              pngOnly: true,
            })
          )[0]
        : undefined;
      return { prompt, n: opts.n ?? 1, ...(opts.size ? { size: opts.size } : {}), images, ...(mask ? { mask } : {}) };
    });
  }

  /** The native variation: routed first, then the ImageRef fetched or decoded and checked. */
  async variationImageRef(req: FastifyRequest, body: ImageVariationBodyT): Promise<ImageResultT> {
    const { image: ref, idempotency_key: _key, ...opts } = body;
    return this.makeImages<ImageVariationInput>(req, 'ai.image.variation', opts, async () => {
      const [image] = await this.imageFiles([ref], (_i, field) => `image${field ? `.${field}` : ''}`);
      return { image, n: opts.n ?? 1, ...(opts.size ? { size: opts.size } : {}) };
    });
  }

  /** ImageRefs as checked upload files: fetched under the egress rules or decoded, then typed and capped. */
  private async imageFiles(
    refs: ImageRef[],
    paramOf: ParamOf,
    opts?: Parameters<typeof imageFile>[2]
  ): Promise<ImageFile[]> {
    const inline = await resolveImages(refs, this.svc.egress, paramOf);
    return inline.map((img, i) => imageFile(Buffer.from(img.data, 'base64'), paramOf(i), opts));
  }

  /** Variations of an uploaded image (`ai.image.variation`). */
  async imageVariation(req: FastifyRequest, body: ImageUploadOptions & { image: ImageFile }): Promise<ImageResultT> {
    return this.makeImages<ImageVariationInput>(req, 'ai.image.variation', body, {
      image: body.image,
      n: body.n ?? 1,
      ...(body.size ? { size: body.size } : {}),
    });
  }

  /** Route, call and save: the images of any image capability, priced per image by the plan. */
  private async makeImages<I extends { n: number }>(
    req: FastifyRequest,
    capability: 'ai.image' | 'ai.image.edit' | 'ai.image.variation',
    opts: ImageUploadOptions,
    fields: I | (() => Promise<I>)
  ): Promise<ImageResultT> {
    const candidates = await this.ai.plan(req, {
      capability,
      model: opts.model,
      vendor: opts.vendor,
      task: 'general',
      prefer: opts.prefer ?? 'balanced',
      needs: [],
    });
    const p = prepared(typeof fields === 'function' ? await fields() : fields, candidates);
    const started = performance.now();
    const r = await this.call<I, ImageOutput>(capability, req, p, IMAGE_TIMEOUT_MS);
    const accountId = req.principal!.accountId;
    // Saved through the result store: the caller gets signed URLs, kept for the retention period.
    const saved = await Promise.all(
      r.output.images.map((img, i) => {
        const mime = sniffImage(img.data) ?? img.mime;
        return this.svc.results.save(accountId, img.data, {
          contentType: mime,
          filename: `image-${i + 1}.${EXT[mime] ?? 'bin'}`,
          inline: true,
        });
      })
    );
    const b64 = opts.response_format === 'b64_json';
    return {
      images: saved.map((s, i) => ({
        url: s.url,
        ...(b64 ? { b64: r.output.images[i].data.toString('base64') } : {}),
      })),
      metadata: this.ai.metadata(p, r.vendor, r.attempts, performance.now() - started, r.costMicros),
    };
  }
}
