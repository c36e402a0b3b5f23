// What an uploaded audio file is and how long it plays, read from its bytes: transcription
// vendors take the container from the file name, and the gateway reserves (and, when the
// vendor names no duration, charges) by the seconds of audio.

export interface AudioKind {
  /** Extension the vendor reads the container from. */
  ext: 'wav' | 'mp3' | 'ogg' | 'flac' | 'm4a' | 'mp4' | 'webm';
  mime: string;
}

/** The containers transcription vendors take, recognised by their magic bytes. */
export function sniffAudio(b: Buffer): AudioKind | undefined {
  if (b.length < 12) return undefined;
  const ascii = (at: number, n: number) => b.toString('latin1', at, at + n);
  if (ascii(0, 4) === 'RIFF' && ascii(8, 4) === 'WAVE') return { ext: 'wav', mime: 'audio/wav' };
  if (ascii(0, 4) === 'OggS') return { ext: 'ogg', mime: 'audio/ogg' };
  if (ascii(0, 4) === 'fLaC') return { ext: 'flac', mime: 'audio/flac' };
  if (ascii(4, 4) === 'ftyp')
    return ascii(8, 3) === 'M4A' ? { ext: 'm4a', mime: 'audio/mp4' } : { ext: 'mp4', mime: 'video/mp4' };
  if (b.readUInt32BE(0) === 0x1a45dfa3) return { ext: 'webm', mime: 'audio/webm' };
  if (ascii(0, 3) === 'ID3' || mpegHeader(b, 0)) return { ext: 'mp3', mime: 'audio/mpeg' };
  return undefined;
}

/** Seconds of audio: exact for WAV, FLAC, Ogg and MP3 with a Xing header, from the bitrate for other MP3; undefined when unknown. */
export function audioSeconds(b: Buffer, kind: AudioKind): number | undefined {
  try {
    if (kind.ext === 'wav') return wavSeconds(b);
    if (kind.ext === 'flac') return flacSeconds(b);
    if (kind.ext === 'ogg') return oggSeconds(b);
    if (kind.ext === 'mp3') return mp3Seconds(b);
  } catch {
    // A truncated or odd header: fall back to the bound from the size.
  }
  return undefined;
}

/** Speech is rarely encoded below 32 kbit/s, so size / 4000 bytes a second bounds the length of other containers. */
export const BOUND_BYTES_PER_SECOND = 4000;

export function estimateSeconds(b: Buffer, kind: AudioKind): number {
  const s = audioSeconds(b, kind);
  return s !== undefined && Number.isFinite(s) && s >= 0 ? s : b.length / BOUND_BYTES_PER_SECOND;
}

function wavSeconds(b: Buffer): number | undefined {
  let byteRate = 0;
  for (let at = 12; at + 8 <= b.length; ) {
    const id = b.toString('latin1', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === 'fmt ') byteRate = b.readUInt32LE(at + 16);
    // A streamed WAV may say 0 or 0xffffffff for its data size: the bytes present are the data.
    if (id === 'data') return byteRate ? Math.min(size, b.length - at - 8) / byteRate : undefined;
    at += 8 + size + (size % 2);
  }
  return undefined;
}

function flacSeconds(b: Buffer): number | undefined {
  // STREAMINFO is the first metadata block: 20 bits sample rate, then 36 bits of total samples.
  const rate = (b[18] << 12) | (b[19] << 4) | (b[20] >> 4);
  const total = (b[21] & 0x0f) * 2 ** 32 + b.readUInt32BE(22);
  return rate && total ? total / rate : undefined;
}

function oggSeconds(b: Buffer): number | undefined {
  const head = b.subarray(0, Math.min(b.length, 512));
  let rate = 0;
  let preSkip = 0;
  const opus = head.indexOf('OpusHead');
  const vorbis = head.indexOf('\x01vorbis', 0, 'latin1');
  if (opus >= 0) {
    rate = 48000; // Opus granule positions always count 48 kHz samples
    preSkip = b.readUInt16LE(opus + 10);
  } else if (vorbis >= 0) {
    rate = b.readUInt32LE(vorbis + 12);
  }
  const last = b.lastIndexOf('OggS');
  if (!rate || last < 0 || last + 14 > b.length) return undefined;
  const granule = Number(b.readBigInt64LE(last + 6));
  return granule > preSkip ? (granule - preSkip) / rate : undefined;
}

const BITRATES = {
  v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

interface MpegFrame {
  kbps: number;
  rate: number;
  mpeg1: boolean;
  mono: boolean;
}

/** An MPEG audio Layer III frame header at `at`. */
function mpegHeader(b: Buffer, at: number): MpegFrame | undefined {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1] & 0xe0) !== 0xe0) return undefined;
  const version = (b[at + 1] >> 3) & 3;
  const layer = (b[at + 1] >> 1) & 3;
  const bi = b[at + 2] >> 4;
  const ri = (b[at + 2] >> 2) & 3;
  if (version === 1 || layer !== 1 || bi === 0 || bi === 15 || ri === 3) return undefined;
  const mpeg1 = version === 3;
  return { kbps: (mpeg1 ? BITRATES.v1 : BITRATES.v2)[bi], rate: RATES[version][ri], mpeg1, mono: b[at + 3] >> 6 === 3 };
}

function mp3Seconds(b: Buffer): number | undefined {
  let at = 0;
  if (b.toString('latin1', 0, 3) === 'ID3') {
    at = 10 + ((b[6] << 21) | (b[7] << 14) | (b[8] << 7) | b[9]); // syncsafe size
  }
  const end = Math.min(b.length - 4, at + 64 * 1024);
  while (at < end && !mpegHeader(b, at)) at++;
  const f = mpegHeader(b, at);
  if (!f) return undefined;
  const samples = f.mpeg1 ? 1152 : 576;
  // A Xing/Info header (VBR and LAME files) counts the frames: exact length.
  const xing = at + 4 + (f.mpeg1 ? (f.mono ? 17 : 32) : f.mono ? 9 : 17);
  const tag = b.toString('latin1', xing, xing + 4);
  if ((tag === 'Xing' || tag === 'Info') && b.readUInt32BE(xing + 4) & 1)
    return (b.readUInt32BE(xing + 8) * samples) / f.rate;
  return ((b.length - at) * 8) / (f.kbps * 1000);
}
