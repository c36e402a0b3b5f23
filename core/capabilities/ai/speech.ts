// The capability contracts of speech: `ai.tts` (TtsInput -> TtsOutput) and `ai.asr`
// (AsrInput -> AsrOutput). Plans reuse CandidatePlan: `price_in` is micro-USD per million
// characters for tts and micro-USD per minute of audio for asr; `price_out` is unused.

/** Audio encodings a tts vendor may be asked for; `ogg` is Opus in an Ogg container. */
export const TTS_FORMATS = ['mp3', 'wav', 'ogg', 'pcm', 'aac', 'flac'] as const;
export type TtsFormat = (typeof TTS_FORMATS)[number];

/** Content types of the tts formats; `pcm` is raw 16-bit little-endian mono samples. */
export const TTS_MIME: Record<TtsFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  pcm: 'audio/pcm',
  aac: 'audio/aac',
  flac: 'audio/flac',
};

export interface TtsInput {
  text: string;
  voice?: string;
  format: TtsFormat;
  /** 0.25 to 4; the vendor's default (1) when absent. */
  speed?: number;
  /** Style instructions for models that take them (gpt-4o-mini-tts). */
  instructions?: string;
}

export interface TtsOutput {
  audio: Buffer;
  format: TtsFormat;
  model: string;
}

export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

export interface AsrInput {
  audio: Buffer;
  /** A name with the extension of the audio's container (vendors read the format from it). */
  filename: string;
  mime: string;
  /** ISO-639-1 hint. */
  language?: string;
  prompt?: string;
  /** Seconds of audio the gateway measured or bounded from the bytes: reserved, and settled when the vendor names none. */
  estimate_seconds: number;
}

export interface AsrOutput {
  text: string;
  /** ISO-639-1 code when the vendor names one it recognises. */
  language?: string;
  /** Seconds of audio as the vendor measured them (what it bills). */
  duration_seconds?: number;
  segments?: TranscriptSegment[];
  model: string;
}
