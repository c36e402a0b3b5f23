import { apiError, type Egress, fieldError } from '../../../core/kit/area.js';
import { sniffAudio, type AudioKind } from './audio-format.js';

const FORMATS = 'flac, m4a, mp3, mp4, ogg, wav or webm';

// Declared types and extensions, for audio whose first bytes say nothing (a stream cut mid-file).
const BY_MIME: Record<string, AudioKind> = {
  'audio/wav': { ext: 'wav', mime: 'audio/wav' },
  'audio/x-wav': { ext: 'wav', mime: 'audio/wav' },
  'audio/wave': { ext: 'wav', mime: 'audio/wav' },
  'audio/mpeg': { ext: 'mp3', mime: 'audio/mpeg' },
  'audio/mp3': { ext: 'mp3', mime: 'audio/mpeg' },
  'audio/ogg': { ext: 'ogg', mime: 'audio/ogg' },
  'audio/opus': { ext: 'ogg', mime: 'audio/ogg' },
  'audio/flac': { ext: 'flac', mime: 'audio/flac' },
  'audio/x-flac': { ext: 'flac', mime: 'audio/flac' },
  'audio/mp4': { ext: 'm4a', mime: 'audio/mp4' },
  'audio/x-m4a': { ext: 'm4a', mime: 'audio/mp4' },
  'video/mp4': { ext: 'mp4', mime: 'video/mp4' },
  'audio/webm': { ext: 'webm', mime: 'audio/webm' },
  'video/webm': { ext: 'webm', mime: 'audio/webm' },
};
const BY_EXT: Record<string, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  mpga: 'audio/mpeg',
  mpeg: 'audio/mpeg',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  webm: 'audio/webm',
};

/** The container of some audio: its bytes first, then the declared type, then the file name. */
export function audioKind(audio: Buffer, param: string, hints: { mime?: string; filename?: string } = {}): AudioKind {
  if (!audio.length) throw fieldError(param, 'is empty');
  const sniffed = sniffAudio(audio);
  if (sniffed) return sniffed;
  const mime = hints.mime?.split(';')[0].trim().toLowerCase();
  if (mime && BY_MIME[mime]) return BY_MIME[mime];
  const ext = hints.filename?.split('.').pop()?.toLowerCase();
  if (ext && BY_EXT[ext]) return BY_MIME[BY_EXT[ext]];
  throw fieldError(param, `is not audio in a format transcription takes (${FORMATS})`);
}

/** Base64 (or a `data:` URL) to bytes; anything that is not base64 is refused rather than decoded leniently. */
export function decodeBase64(text: string, param: string, maxBytes: number): { bytes: Buffer; mime?: string } {
  let mime: string | undefined;
  let data = text;
  const dataUrl = /^data:([^;,]*)(;[^,]*)?,/.exec(text);
  if (dataUrl) {
    if (!/;base64/.test(dataUrl[2] ?? '')) throw fieldError(param, 'is a data: URL that is not base64');
    mime = dataUrl[1] || undefined;
    data = text.slice(dataUrl[0].length);
  }
  data = data.replace(/\s+/g, '');
  if (!data || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(data) || data.length % 4 === 1)
    throw fieldError(param, 'is not valid base64');
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length > maxBytes)
    throw apiError('payload_too_large', `${param} decodes to ${bytes.length} bytes, over the cap of ${maxBytes}.`, {
      param,
      details: { max_bytes: maxBytes },
    });
  return { bytes, mime };
}

/** Audio at a caller's URL, through the guarded egress, size and time capped. */
export async function fetchAudio(
  egress: Egress,
  url: string,
  param: string,
  maxBytes: number,
  signal?: AbortSignal
): Promise<{ bytes: Buffer; mime?: string; filename?: string }> {
  const res = await egress.fetch(url, { param, maxBytes, signal });
  if (res.status < 200 || res.status > 299) {
    throw apiError('unprocessable', `${param} answered HTTP ${res.status}; it must answer 200 with the audio.`, {
      param,
      details: { status: res.status },
    });
  }
  return { bytes: res.body, mime: res.headers['content-type'], filename: new URL(res.url).pathname.split('/').pop() };
}
