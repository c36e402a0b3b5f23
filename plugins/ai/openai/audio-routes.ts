import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Prefer } from '../planner.js';
import type { SpeechService } from '../speech/service.js';
import { fieldError } from '../../../core/kit/area.js';
import { OA_TRANSCRIPT_FORMATS, OaSpeechBody, type OaSpeechBodyT, type OaTranscriptFormat } from './audio-schemas.js';
import { ROUTED } from './wire.js';
import { json, srt, verboseJson, vtt, type Transcript } from './transcript-formats.js';
import { readUpload } from './multipart-upload.js';

const MIME: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** OpenAI's `model`: a model id pins it, a routing word picks by preference. */
function modelOrPrefer(model: string): { model?: string; prefer?: Prefer } {
  if (!ROUTED.has(model)) return { model };
  return { prefer: model === 'auto' ? 'balanced' : (model as Prefer) };
}

/**
 * /v1/openai/audio/speech and /v1/openai/audio/transcriptions, in OpenAI's wire format, so
 * `client.audio.speech.create` and `client.audio.transcriptions.create` of the official SDK
 * work against the gateway. Registered in a scope of their own: only these routes parse
 * multipart/form-data.
 */
export async function registerOpenAiAudioRoutes(app: FastifyInstance, speech: SpeechService): Promise<void> {
  const cap = app.svc.config.limits.large_body_bytes;
  await app.register(multipart, { limits: { fileSize: cap, files: 1, fields: 32, fieldSize: 64 * 1024, parts: 64 } });

  app.post(
    '/v1/openai/audio/speech',
    {
      config: { scope: 'ai', operation: 'openai.audio.speech', capability: 'ai.tts', errors: ['unprocessable'] },
      schema: { summary: 'OpenAI text to speech: answers with the audio bytes', tags: ['openai'], body: OaSpeechBody },
    },
    async (req: FastifyRequest<{ Body: OaSpeechBodyT }>, reply: FastifyReply) => {
      const b = req.body;
      const format = b.response_format ?? 'mp3';
      const { output } = await speech.speak(req, {
        input: b.input,
        voice: b.voice,
        format: format === 'opus' ? 'ogg' : format,
        speed: b.speed,
        instructions: b.instructions,
        ...modelOrPrefer(b.model),
      });
      return reply.type(MIME[format]).send(output.audio);
    }
  );

  app.post(
    '/v1/openai/audio/transcriptions',
    {
      bodyLimit: cap,
      config: {
        scope: 'ai',
        operation: 'openai.audio.transcriptions',
        capability: 'ai.asr',
        errors: ['unprocessable', 'payload_too_large', 'unsupported_media_type'],
      },
      schema: {
        summary: 'OpenAI transcription: multipart/form-data with `file` and `model`',
        tags: ['openai'],
        consumes: ['multipart/form-data'],
      } as FastifySchema,
    },
    async (req: FastifyRequest, reply: FastifyReply) => {
      const { files, fields } = await readUpload(req, 'transcription', {
        fileBytes: cap,
        fileParam: 'file',
        tooManyFiles: 'Send one file part, named `file`.',
      });
      const file = files.find((f) => f.field === 'file');
      if (!file) throw fieldError('file', 'is required');
      if (!fields.model) throw fieldError('model', 'is required');
      const format = (fields.response_format || 'json') as OaTranscriptFormat;
      if (!OA_TRANSCRIPT_FORMATS.includes(format))
        throw fieldError('response_format', `must be one of ${OA_TRANSCRIPT_FORMATS.join(', ')}`);
      if (fields.stream === 'true') throw fieldError('stream', 'is not served; send the request without it');
      if (fields.language && !/^[a-z]{2,3}$/.test(fields.language))
        throw fieldError('language', 'must be an ISO-639-1 code such as `en`');
      const { output, seconds } = await speech.transcribe(req, {
        audio: file.bytes,
        mime: file.mime,
        filename: file.filename,
        language: fields.language || undefined,
        prompt: fields.prompt || undefined,
        param: 'file',
        ...modelOrPrefer(fields.model),
      });
      const t: Transcript = {
        text: output.text,
        language: output.language ?? fields.language ?? null,
        seconds,
        segments: output.segments,
      };
      if (format === 'json') return json(t);
      if (format === 'verbose_json') return verboseJson(t);
      const text = format === 'text' ? `${t.text}\n` : format === 'srt' ? srt(t) : vtt(t);
      return reply.type(format === 'vtt' ? 'text/vtt; charset=utf-8' : 'text/plain; charset=utf-8').send(text);
    }
  );
}
