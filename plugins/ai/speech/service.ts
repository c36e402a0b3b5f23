import type { FastifyRequest } from 'fastify';
import {
  type Svc,
  characters,
  TTS_MIME,
  type AsrInput,
  type AsrOutput,
  type TtsFormat,
  type TtsInput,
  type TtsOutput,
} from '../../../core/kit/area.js';
import { prepared, type AiService } from '../service.js';
import type { Prefer } from '../planner.js';
import { estimateSeconds } from './audio-format.js';
import { audioKind, decodeBase64, fetchAudio } from './audio-input.js';
import type { AsrBodyT, AsrResultT, TtsBodyT, TtsResultT } from './schemas.js';

export interface SpeakRequest {
  input: string;
  voice?: string;
  format: TtsFormat;
  speed?: number;
  instructions?: string;
  model?: string;
  vendor?: string;
  prefer?: Prefer;
}

export interface TranscribeRequest {
  audio: Buffer;
  /** Declared type and file name: used only when the bytes do not say what they are. */
  mime?: string;
  filename?: string;
  language?: string;
  prompt?: string;
  model?: string;
  vendor?: string;
  prefer?: Prefer;
  /** Request field the audio came in, for errors. */
  param: string;
}

/**
 * Speech synthesis and transcription for the native /v1/ai surface and the OpenAI-compatible
 * one: planned like chat (catalog, BYOK, region, pins), called through the router (the wallet
 * reserves the estimate and settles the actual), tts audio kept in the core result store.
 */
export class SpeechService {
  constructor(
    private readonly svc: Svc,
    private readonly ai: AiService
  ) {}

  private async call<I, O>(
    req: FastifyRequest,
    capability: 'ai.tts' | 'ai.asr',
    r: { model?: string; vendor?: string; prefer?: Prefer },
    input: I
  ) {
    const candidates = await this.ai.plan(req, {
      capability,
      model: r.model,
      vendor: r.vendor,
      task: 'general',
      prefer: r.prefer ?? 'balanced',
      needs: [],
    });
    const p = prepared(input, candidates);
    const started = performance.now();
    try {
      const res = await this.svc.router.call<I, O>(capability, input, this.ai.callOptions(req, candidates, {}));
      return {
        output: res.output,
        metadata: this.ai.metadata(p, res.vendor, res.attempts, performance.now() - started, res.costMicros),
      };
    } catch (e) {
      throw this.ai.withModels(e, p);
    }
  }

  /** The audio bytes of a text, from the routed vendor. */
  speak(req: FastifyRequest, r: SpeakRequest) {
    return this.call<TtsInput, TtsOutput>(req, 'ai.tts', r, {
      text: r.input,
      voice: r.voice,
      format: r.format,
      speed: r.speed,
      instructions: r.instructions,
    });
  }

  /** POST /v1/ai/tts: the audio is saved as a result and handed back as a signed URL (and inline when asked). */
  async tts(req: FastifyRequest, b: TtsBodyT): Promise<TtsResultT> {
    const format = b.format ?? 'mp3';
    const { output, metadata } = await this.speak(req, { ...b, format });
    const mime = TTS_MIME[output.format];
    const saved = await this.svc.results.save(req.principal!.accountId, output.audio, {
      contentType: mime,
      filename: `speech.${output.format}`,
    });
    return {
      audio_url: saved.url,
      format: output.format,
      mime,
      bytes: output.audio.length,
      url_expires_at: new Date(saved.url_expires_at).toISOString(),
      ...(b.include_b64 ? { b64: output.audio.toString('base64') } : {}),
      usage: { characters: characters(b.input) },
      metadata,
    };
  }

  /** A transcript of some audio, with the seconds billed (the vendor's count, else the gateway's). */
  async transcribe(req: FastifyRequest, r: TranscribeRequest) {
    const kind = audioKind(r.audio, r.param, { mime: r.mime, filename: r.filename });
    const estimate = estimateSeconds(r.audio, kind);
    const res = await this.call<AsrInput, AsrOutput>(req, 'ai.asr', r, {
      audio: r.audio,
      filename: `audio.${kind.ext}`,
      mime: kind.mime,
      language: r.language,
      prompt: r.prompt,
      estimate_seconds: estimate,
    });
    return { ...res, seconds: res.output.duration_seconds ?? estimate };
  }

  /** POST /v1/ai/asr: base64 is checked before anything else; a URL is fetched only once a vendor is known to exist. */
  async asr(req: FastifyRequest, b: AsrBodyT): Promise<AsrResultT> {
    const cap = this.svc.config.limits.large_body_bytes;
    let audio: { bytes: Buffer; mime?: string; filename?: string };
    let param: string;
    if ('base64' in b.audio) {
      param = 'audio.base64';
      const d = decodeBase64(b.audio.base64, param, cap);
      audio = { bytes: d.bytes, mime: b.audio.mime ?? d.mime };
      audioKind(audio.bytes, param, audio);
    } else {
      param = 'audio.url';
      const url = b.audio.url;
      await this.svc.egress.check(url, param);
      await this.ai.plan(req, {
        capability: 'ai.asr',
        model: b.model,
        vendor: b.vendor,
        task: 'general',
        prefer: 'balanced',
        needs: [],
      });
      audio = await fetchAudio(this.svc.egress, url, param, cap, req.meter.signal);
    }
    const { output, metadata, seconds } = await this.transcribe(req, {
      ...b,
      audio: audio.bytes,
      mime: audio.mime,
      filename: audio.filename,
      param,
    });
    return {
      text: output.text,
      language: output.language ?? b.language ?? null,
      ...(output.segments ? { segments: output.segments } : {}),
      duration_seconds: Math.round(seconds * 1000) / 1000,
      metadata,
    };
  }
}
