import type { ServerResponse } from 'node:http';
import { words, type FakeRequest, type Script } from './script.js';

// OpenAI's audio endpoints as a fake: POST /audio/speech answers real audio bytes (WAV, raw PCM,
// MPEG Layer III frames, Ogg Opus) in the requested response_format; POST
// /audio/transcriptions parses the multipart upload for real and answers json, text,
// verbose_json, srt or vtt with the duration read from the upload.

type SendError = (res: ServerResponse, status: number, message: string) => void;

const VOICES = new Set([
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'onyx',
  'nova',
  'sage',
  'shimmer',
  'verse',
  'marin',
  'cedar',
]);
const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
const UPLOAD_EXTS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];
const RATE = 24_000;
/** Speech length the fake makes: 10 ms of tone a character. */
export const MS_PER_CHAR = 10;

/** 16-bit mono samples of a quiet tone, `ms` long at 24 kHz. */
export function pcm(ms: number): Buffer {
  const n = Math.round((RATE * ms) / 1000);
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
  return b;
}

export function wav(samples: Buffer, rate = RATE): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + samples.length, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(samples.length, 40);
  return Buffer.concat([h, samples]);
}

/** Silent MPEG-2 Layer III frames, 24 kHz mono 32 kbit/s: 96 bytes and 24 ms each. */
export function mp3(ms: number): Buffer {
  const frames = Math.max(1, Math.ceil(ms / 24));
  const frame = Buffer.alloc(96);
  frame.set([0xff, 0xf3, 0x44, 0xc0]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

const CRC = Array.from({ length: 256 }, (_, i) => {
  let r = i << 24;
  for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

export function oggPage(packet: Buffer, seq: number, granule: bigint, flags: number): Buffer {
  const lacing = [...Array(Math.floor(packet.length / 255)).fill(255), packet.length % 255];
  const h = Buffer.alloc(27 + lacing.length);
  h.write('OggS', 0, 'latin1');
  h[5] = flags;
  h.writeBigInt64LE(granule, 6);
  h.writeUInt32LE(0x5356_4347, 14); // stream serial
  h.writeUInt32LE(seq, 18);
  h[26] = lacing.length;
  h.set(lacing, 27);
  const page = Buffer.concat([h, packet]);
  let crc = 0;
  for (const byte of page) crc = ((crc << 8) ^ CRC[((crc >>> 24) ^ byte) & 0xff]) >>> 0;
  page.writeUInt32LE(crc, 22);
  return page;
}

/** Ogg Opus of 20 ms CELT silence packets (granules count 48 kHz samples). */
export function oggOpus(ms: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1;
  head[9] = 1;
  head.writeUInt16LE(312, 10); // pre-skip
  head.writeUInt32LE(RATE, 12);
  const tags = Buffer.concat([
    Buffer.from('OpusTags', 'latin1'),
    Buffer.from([4, 0, 0, 0]),
    Buffer.from('fake'),
    Buffer.alloc(4),
  ]);
  const packets = Math.max(1, Math.ceil(ms / 20));
  const pages = [oggPage(head, 0, 0n, 2), oggPage(tags, 1, 0n, 0)];
  for (let i = 0; i < packets; i++)
    pages.push(oggPage(Buffer.from([0xf8, 0xff, 0xfe]), i + 2, BigInt(312 + (i + 1) * 960), i === packets - 1 ? 4 : 0));
  return Buffer.concat(pages);
}

function speech(req: FakeRequest, res: ServerResponse, error: SendError) {
  const b = req.body;
  if (!b || typeof b !== 'object') return error(res, 400, 'We could not parse the JSON body of your request.');
  for (const k of ['model', 'input', 'voice']) if (!b[k]) return error(res, 400, `Missing required parameter: '${k}'.`);
  if (!VOICES.has(b.voice)) return error(res, 400, `Invalid value for 'voice': '${b.voice}'.`);
  if (b.speed !== undefined && (b.speed < 0.25 || b.speed > 4)) return error(res, 400, `Invalid 'speed': ${b.speed}.`);
  const format = b.response_format ?? 'mp3';
  if (!SPEECH_TYPES[format]) return error(res, 400, `response_format '${format}' is not produced by this fake.`);
  const ms = [...String(b.input)].length * MS_PER_CHAR;
  const audio = format === 'wav' ? wav(pcm(ms)) : format === 'pcm' ? pcm(ms) : format === 'mp3' ? mp3(ms) : oggOpus(ms);
  res.writeHead(200, { 'content-type': SPEECH_TYPES[format], 'content-length': audio.length });
  res.end(audio);
}

/** The upload as OpenAI's server reads it (the platform's multipart parser). */
export async function uploadOf(req: FakeRequest): Promise<FormData> {
  return new Response(new Uint8Array(req.bytes), {
    headers: { 'content-type': String(req.headers['content-type']) },
  }).formData();
}

/** Seconds of a WAV upload from its header; other containers at 16 kB/s. */
function seconds(file: Buffer): number {
  if (file.toString('latin1', 0, 4) === 'RIFF') {
    for (let at = 12; at + 8 <= file.length; at += 8 + file.readUInt32LE(at + 4)) {
      if (file.toString('latin1', at, at + 4) === 'data') return file.readUInt32LE(at + 4) / file.readUInt32LE(28);
    }
  }
  return file.length / 16_000;
}

const LANGUAGES: Record<string, string> = { en: 'english', de: 'german', fr: 'french', es: 'spanish', ja: 'japanese' };

async function transcription(req: FakeRequest, res: ServerResponse, s: Script, error: SendError) {
  if (!String(req.headers['content-type']).startsWith('multipart/form-data'))
    return error(res, 400, 'Expected multipart/form-data.');
  let form: FormData;
  try {
    form = await uploadOf(req);
  } catch {
    return error(res, 400, 'Could not parse multipart form.');
  }
  const file = form.get('file');
  const model = form.get('model');
  if (!(file instanceof Blob)) return error(res, 400, "Missing required parameter: 'file'.");
  if (typeof model !== 'string' || !model) return error(res, 400, "Missing required parameter: 'model'.");
  const ext = (file as File).name?.split('.').pop()?.toLowerCase() ?? '';
  if (!UPLOAD_EXTS.includes(ext))
    return error(res, 400, `Invalid file format. Supported formats: ${JSON.stringify(UPLOAD_EXTS)}`);
  const language = form.get('language');
  if (language !== null && !/^[a-z]{2}$/.test(String(language)))
    return error(res, 400, `Invalid language '${language}'. Language parameter must be specified in ISO-639-1 format.`);
  const format = String(form.get('response_format') ?? 'json');
  const whisper = model.startsWith('whisper');
  if (!(whisper ? ['json', 'text', 'srt', 'verbose_json', 'vtt'] : ['json', 'text']).includes(format)) {
    return error(res, 400, `response_format '${format}' is not compatible with model '${model}'.`);
  }
  const duration = Math.round(seconds(Buffer.from(await file.arrayBuffer())) * 100) / 100;
  const text = s.content ?? 'Hello from fake-openai.';
  if (format === 'text') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    return res.end(`${text}\n`);
  }
  const usage = whisper
    ? { type: 'duration', seconds: Math.ceil(duration) }
    : { type: 'tokens', input_tokens: 20, output_tokens: words(text).length, total_tokens: 20 + words(text).length };
  const body =
    format === 'verbose_json'
      ? {
          task: 'transcribe',
          language: LANGUAGES[String(language ?? 'en')] ?? 'english',
          duration,
          text,
          segments: segments(text, duration),
          usage,
        }
      : { text, usage };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Two segments splitting the words, timed in proportion. */
function segments(text: string, duration: number) {
  const w = words(text);
  const half = Math.ceil(w.length / 2);
  const mid = Math.round(((duration * half) / Math.max(1, w.length)) * 100) / 100;
  const parts = [
    [w.slice(0, half), 0, mid],
    [w.slice(half), mid, duration],
  ] as const;
  return parts
    .filter(([p]) => p.length)
    .map(([p, start, end], id) => ({
      id,
      seek: 0,
      start,
      end,
      text: ` ${p.join('').trim()}`,
      tokens: [],
      temperature: 0,
      avg_logprob: -0.2,
      compression_ratio: 1,
      no_speech_prob: 0.01,
    }));
}

/** Answers the audio paths; false for any other path. */
export async function audioRoute(req: FakeRequest, res: ServerResponse, s: Script, error: SendError): Promise<boolean> {
  if (req.method !== 'POST') return false;
  if (req.path.endsWith('/audio/speech')) return (speech(req, res, error), true);
  if (req.path.endsWith('/audio/transcriptions')) return (await transcription(req, res, s, error), true);
  return false;
}
