import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AsrBody, AsrResult, TtsBody, TtsResult, type AsrBodyT, type TtsBodyT } from './schemas.js';
import type { SpeechService } from './service.js';

export function registerSpeechRoutes(app: FastifyInstance, speech: SpeechService): void {
  app.post(
    '/v1/ai/tts',
    {
      config: { scope: 'ai', operation: 'ai.tts', capability: 'ai.tts', idempotent: true, errors: ['unprocessable'] },
      schema: {
        summary: 'Speak a text; the audio is kept as a result and returned as a signed URL',
        tags: ['ai'],
        body: TtsBody,
        response: { 200: TtsResult },
      },
    },
    async (req: FastifyRequest<{ Body: TtsBodyT }>) => speech.tts(req, req.body)
  );

  // Base64 audio: the large body cap (25 MiB by default), as for images and email.
  app.post(
    '/v1/ai/asr',
    {
      bodyLimit: app.svc.config.limits.large_body_bytes,
      config: {
        scope: 'ai',
        operation: 'ai.asr',
        capability: 'ai.asr',
        idempotent: true,
        errors: ['unprocessable', 'payload_too_large', 'fetch_failed', 'fetch_timeout'],
      },
      schema: {
        summary: 'Transcribe audio given by URL or as base64',
        tags: ['ai'],
        body: AsrBody,
        response: { 200: AsrResult },
      },
    },
    async (req: FastifyRequest<{ Body: AsrBodyT }>) => speech.asr(req, req.body)
  );
}
