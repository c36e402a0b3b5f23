import {
  type CapabilityImpl,
  type InvokeOptions,
  type VendorContext,
  VendorFailure,
  asrPrice,
  planOf,
  ttsPrice,
  type CandidatePlan,
  type AsrInput,
  type AsrOutput,
  type TtsFormat,
  type TtsInput,
  type TtsOutput,
  joinUrl,
  readJson,
  vendorFetch,
} from '../../core/kit/vendor.js';
import { languageCode } from './languages.js';

export interface OpenAiAudioConfig {
  base_url: string;
  api_key: string;
  organization?: string;
  models?: string[];
}

// OpenAI calls Opus-in-Ogg `opus`; the other names are the same.
const RESPONSE_FORMAT: Record<TtsFormat, string> = {
  mp3: 'mp3',
  wav: 'wav',
  ogg: 'opus',
  pcm: 'pcm',
  aac: 'aac',
  flac: 'flac',
};

interface OaTranscription {
  text?: string;
  language?: string;
  duration?: number;
  segments?: Array<{ start: number; end: number; text: string }>;
  usage?: { type?: string; seconds?: number };
}

/**
 * OpenAI's audio endpoints: POST /audio/speech (JSON in, audio bytes out) for `ai.tts`, and
 * POST /audio/transcriptions (multipart upload) for `ai.asr`. Whisper models are asked for
 * verbose_json, which carries the duration OpenAI bills, the language and segments; the
 * gpt-4o transcribe models answer only json (the gateway's measured duration is billed).
 */
export function openAiAudio(cfg: OpenAiAudioConfig, ctx: VendorContext): Record<'ai.tts' | 'ai.asr', CapabilityImpl> {
  const id = ctx.instanceId;
  const auth = (creds?: Record<string, string>): Record<string, string> => {
    const key = creds?.api_key ?? cfg.api_key;
    return {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(cfg.organization ? { 'openai-organization': cfg.organization } : {}),
    };
  };
  const models = cfg.models?.length ? cfg.models : undefined;
  return {
    'ai.tts': {
      models,
      async invoke(input: TtsInput, opts: InvokeOptions<CandidatePlan>): Promise<TtsOutput> {
        const p = planOf(opts.plan, id);
        const body = {
          model: p.model,
          input: input.text,
          voice: input.voice ?? 'alloy',
          response_format: RESPONSE_FORMAT[input.format],
          ...(input.speed !== undefined ? { speed: input.speed } : {}),
          ...(input.instructions ? { instructions: input.instructions } : {}),
        };
        const res = await vendorFetch(
          ctx.fetch,
          joinUrl(cfg.base_url, '/audio/speech'),
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...auth(p.credentials) },
            body: JSON.stringify(body),
            signal: opts.signal,
          },
          id
        );
        const type = res.headers.get('content-type') ?? '';
        const audio = Buffer.from(await res.arrayBuffer());
        // An error page behind a proxy answers 200 with JSON or HTML: that is not speech.
        if (!audio.length || /json|html/.test(type))
          throw new VendorFailure(
            'unavailable',
            `${id} answered /audio/speech without audio (${type || 'no content type'})`
          );
        return { audio, format: input.format, model: p.model };
      },
      price: (input: TtsInput, _out?: TtsOutput, plan?: CandidatePlan) => ttsPrice(plan, input.text),
    },
    'ai.asr': {
      models,
      async invoke(input: AsrInput, opts: InvokeOptions<CandidatePlan>): Promise<AsrOutput> {
        const p = planOf(opts.plan, id);
        const verbose = p.model.startsWith('whisper');
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(input.audio)], { type: input.mime }), input.filename);
        form.append('model', p.model);
        form.append('response_format', verbose ? 'verbose_json' : 'json');
        if (input.language) form.append('language', input.language);
        if (input.prompt) form.append('prompt', input.prompt);
        const res = await vendorFetch(
          ctx.fetch,
          joinUrl(cfg.base_url, '/audio/transcriptions'),
          {
            method: 'POST',
            headers: auth(p.credentials),
            body: form,
            signal: opts.signal,
          },
          id
        );
        const j = await readJson<OaTranscription>(res, id);
        if (typeof j.text !== 'string')
          throw new VendorFailure('unavailable', `${id} answered /audio/transcriptions without text`);
        const duration = j.duration ?? (j.usage?.type === 'duration' ? j.usage.seconds : undefined);
        return {
          text: j.text,
          model: p.model,
          ...(languageCode(j.language) ? { language: languageCode(j.language) } : {}),
          ...(typeof duration === 'number' && duration >= 0 ? { duration_seconds: duration } : {}),
          ...(Array.isArray(j.segments)
            ? { segments: j.segments.map((s) => ({ start: s.start, end: s.end, text: s.text })) }
            : {}),
        };
      },
      price: (input: AsrInput, out?: AsrOutput, plan?: CandidatePlan) => asrPrice(plan, input.estimate_seconds, out),
    },
  };
}
