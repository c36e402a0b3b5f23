import type { FastifyRequest } from 'fastify';
import type { Svc } from '../../../core/context.js';
import type { CallResult } from '../../../core/router/router.js';
import type { ChatInput, ChatOutput, ImageInput, ImageOutput } from '../contract.js';
import type { ChatBodyT, ChatResultT } from '../schemas.js';
import type { AiService, Prepared } from '../service.js';
import { resolveImages, sniffImage, type ImageRef } from './image-input.js';
import type { ImageBodyT, ImageResultT, VisionBodyT } from './schemas.js';

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

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' };

/** Vision (chat about images) and image generation, routed and charged like chat. */
export class MediaService {
  constructor(private readonly svc: Svc, private readonly ai: AiService) {}

  private async call<I, O>(capability: string, req: FastifyRequest, p: Prepared<I>, timeoutMs?: number): Promise<CallResult<O>> {
    try {
      return await this.svc.router.call<I, O>(capability, p.input, { ...this.ai.callOptions(req, p.candidates, {}), ...(timeoutMs ? { timeoutMs } : {}) });
    } catch (e) {
      throw this.ai.withModels(e, p);
    }
  }

  async vision(req: FastifyRequest, body: VisionBodyT): Promise<ChatResultT> {
    return this.visionChat(req, { messages: [{ role: 'user', content: body.prompt }], model: body.model, vendor: body.vendor, max_tokens: body.max_tokens },
      body.images.map((ref, i) => ({ message: 0, ref, param: (field) => `images[${i}]${field ? `.${field}` : ''}` })));
  }

  /** A chat whose turns carry images (the native vision body, or an OpenAI chat with image parts), on `ai.vision`. */
  async visionChat(req: FastifyRequest, body: ChatBodyT, images: ImageSource[]): Promise<ChatResultT> {
    // Routing first: with no vision vendor, nothing is fetched.
    const p = await this.ai.prepareChat(req, { ...body, cache_strategy: 'none' }, false, 'ai.vision');
    const inline = await resolveImages(images.map((i) => i.ref), this.svc.egress, (i, field) => images[i].param(field));
    const messages = p.input.messages.map((m) => ({ ...m }));
    inline.forEach((img, i) => (messages[images[i].message].images ??= []).push(img));
    p.input.messages = messages;
    p.input.estimate.input_tokens += inline.length * VISION_TOKENS_PER_IMAGE;
    const started = performance.now();
    const r = await this.call<ChatInput, ChatOutput>('ai.vision', req, p);
    return this.ai.chatResult(p, r, started);
  }

  async image(req: FastifyRequest, body: ImageBodyT): Promise<ImageResultT> {
    const candidates = await this.ai.plan(req, { capability: 'ai.image', model: body.model, vendor: body.vendor, task: 'general', prefer: body.prefer ?? 'balanced', needs: [] });
    const input: ImageInput = {
      prompt: body.prompt, n: body.n ?? 1, ...(body.size ? { size: body.size } : {}),
      plan: Object.fromEntries(candidates.map((c) => [c.instanceId, c.plan])),
    };
    const p: Prepared<ImageInput> = { input, candidates, modelOf: (v) => input.plan[v]?.model };
    const started = performance.now();
    const r = await this.call<ImageInput, ImageOutput>('ai.image', req, p, IMAGE_TIMEOUT_MS);
    const accountId = req.principal!.accountId;
    // Saved through the result store: the caller gets signed URLs, kept for the retention period.
    const saved = await Promise.all(r.output.images.map((img, i) => {
      const mime = sniffImage(img.data) ?? img.mime;
      return this.svc.results.save(accountId, img.data, { contentType: mime, filename: `image-${i + 1}.${EXT[mime] ?? 'bin'}`, inline: true });
    }));
    const b64 = body.response_format === 'b64_json';
    return {
      images: saved.map((s, i) => ({ url: s.url, ...(b64 ? { b64: r.output.images[i].data.toString('base64') } : {}) })),
      metadata: this.ai.metadata(p, r.vendor, r.attempts, performance.now() - started, r.costMicros),
    };
  }
}
