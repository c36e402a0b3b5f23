import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../../../core/kit/area.js';
import type { ImageSource, MediaService } from '../media/media-service.js';
import { runStream } from '../stream-runner.js';
import type { AiService } from '../service.js';
import type { OaChatBodyT } from './schemas.js';
import { completion, fromOpenAi, openAiWriter } from './wire.js';

interface ImagePart {
  type: 'image_url';
  image_url?: { url?: unknown; detail?: string };
}

/**
 * The image parts of an OpenAI chat request, taken out of the messages: a `data:` URL is
 * base64, any other URL is fetched by the gateway under the egress rules. Undefined when
 * no message carries an image part (an ordinary chat).
 */
export function splitImageParts(b: OaChatBodyT): { text: OaChatBodyT; images: ImageSource[] } | undefined {
  const images: ImageSource[] = [];
  const messages = b.messages.map((m, mi) => {
    if (!Array.isArray(m.content)) return m;
    const content = m.content.filter((part, pi) => {
      if (part.type !== 'image_url') return true;
      // Every vendor takes images in user turns only.
      if (m.role !== 'user')
        throw apiError('validation_failed', `messages[${mi}]: image parts are only allowed in user messages.`, {
          param: `messages[${mi}].content[${pi}]`,
        });
      const url = (part as ImagePart).image_url?.url;
      const ref =
        typeof url === 'string' && url.startsWith('data:')
          ? { base64: url }
          : { url: typeof url === 'string' ? url : '' };
      images.push({ message: mi, ref, param: () => `messages[${mi}].content[${pi}].image_url.url` });
      return false;
    });
    return { ...m, content };
  });
  return images.length ? { text: { ...b, messages }, images } : undefined;
}

/** An OpenAI chat with images: answered by `ai.vision`, or streamed from the vendor by `ai.vision.stream`. */
export async function openAiVisionChat(
  req: FastifyRequest<{ Body: OaChatBodyT }>,
  reply: FastifyReply,
  ai: AiService,
  media: MediaService,
  split: { text: OaChatBodyT; images: ImageSource[] },
  id: string
) {
  const body = fromOpenAi(split.text);
  if (!req.body.stream) return completion(await media.visionChat(req, body, split.images), id);
  const started = performance.now();
  const { p, session } = await media.visionStream(req, { ...body, stream: true }, split.images);
  await runStream(
    req,
    reply,
    ai,
    p,
    session,
    openAiWriter(id, p.modelOf(session.vendor) ?? req.body.model, !!req.body.stream_options?.include_usage),
    started
  );
  return reply;
}
