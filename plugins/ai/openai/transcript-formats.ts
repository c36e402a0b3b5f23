import type { TranscriptSegment } from '../../../core/kit/area.js';

// The shapes OpenAI answers /audio/transcriptions with, per `response_format`.

export interface Transcript {
  text: string;
  language: string | null;
  seconds: number;
  segments?: TranscriptSegment[];
}

// Made on first use: loading ICU's display names costs ~20 ms, at every start otherwise.
let names: Intl.DisplayNames | undefined;

/** OpenAI's verbose_json names the language in English words ("english"). */
function languageName(code: string | null): string | null {
  if (!code) return null;
  try {
    return ((names ??= new Intl.DisplayNames(['en'], { type: 'language' })).of(code) ?? code).toLowerCase();
  } catch {
    return code;
  }
}

function stamp(seconds: number, sep: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)}${sep}${p(ms % 1000, 3)}`;
}

/** Cues: the vendor's segments, or the whole text as one cue when it gave none. */
function cues(t: Transcript): TranscriptSegment[] {
  return t.segments?.length ? t.segments : [{ start: 0, end: t.seconds, text: t.text }];
}

export function srt(t: Transcript): string {
  return cues(t)
    .map((c, i) => `${i + 1}\n${stamp(c.start, ',')} --> ${stamp(c.end, ',')}\n${c.text.trim()}\n`)
    .join('\n');
}

export function vtt(t: Transcript): string {
  return `WEBVTT\n\n${cues(t)
    .map((c) => `${stamp(c.start, '.')} --> ${stamp(c.end, '.')}\n${c.text.trim()}\n`)
    .join('\n')}`;
}

/** `usage` as OpenAI reports it for duration-billed models: whole seconds. */
const usage = (t: Transcript) => ({ type: 'duration', seconds: Math.ceil(t.seconds) });

export function json(t: Transcript) {
  return { text: t.text, usage: usage(t) };
}

export function verboseJson(t: Transcript) {
  return {
    task: 'transcribe',
    language: languageName(t.language),
    duration: t.seconds,
    text: t.text,
    ...(t.segments ? { segments: t.segments.map((s, id) => ({ id, start: s.start, end: s.end, text: s.text })) } : {}),
    usage: usage(t),
  };
}
