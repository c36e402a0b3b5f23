import { createHash } from 'node:crypto';

// Grouping errors into issues, as Sentry does by default: the exception type and the innermost
// frames of its stack (function, file, line: a capture from another line is another issue),
// or, with no usable stack, the message with what varies between occurrences (numbers, ids,
// addresses) masked. Frames are compared normalised, so the stack text of the JSON API and the
// structured frames of a Sentry event group alike.

/** One stack frame as both sources give it; the innermost frame comes first in a list. */
export interface Frame {
  fn?: string;
  file?: string;
  line?: number;
}

export interface Grouping {
  fingerprint: string;
  /** Exception type (`TypeError`), or the caller's `code`, or null. */
  type: string | null;
  /** The headline: type and first line of the message. */
  title: string;
  /** The innermost frame, as `fn (file:line)`, or null. */
  culprit: string | null;
}

// V8: "    at fn (file:line:col)" or "    at file:line:col"; Firefox/Safari: "fn@file:line:col".
const V8_FRAME = /^\s*at\s+(?:(.+?)\s+\()?(.+?):(\d+)(?::\d+)?\)?\s*$/;
const GECKO_FRAME = /^\s*([^@\s]*)@(.+?):(\d+)(?::\d+)?\s*$/;
const TYPE_LINE = /^([A-Za-z_$][\w$.]*)(?::|$)/;

/** Frames of a stack trace's text, innermost first; lines that are not frames are skipped. */
export function parseStack(stack: string): Frame[] {
  const frames: Frame[] = [];
  for (const line of stack.split('\n')) {
    const m = V8_FRAME.exec(line) ?? GECKO_FRAME.exec(line);
    if (m) frames.push({ fn: m[1] || undefined, file: m[2], line: Number(m[3]) });
  }
  return frames;
}

/** The exception type a stack's first line names (`TypeError: …`), if it names one. */
export function stackType(stack: string): string | null {
  const first = stack.split('\n', 1)[0].trim();
  if (V8_FRAME.test(first) || GECKO_FRAME.test(first)) return null;
  return TYPE_LINE.exec(first)?.[1] ?? null;
}

// The runtime's own frames say nothing about where the error is in the caller's code.
const INTERNAL = /^(node:|internal\/|native$|<anonymous>$)/;

/**
 * A frame as grouping compares it: the file without scheme, host, query or fragment (cache
 * busters and CDN hosts change between deploys), `Object.` and `async ` dropped from names.
 */
export function normalFrame(f: Frame): string | null {
  let file = f.file ?? '';
  if (INTERNAL.test(file)) return null;
  file = file.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').replace(/[?#].*$/, '');
  const fn = (f.fn ?? '?').replace(/^async\s+/, '').replace(/^Object\./, '');
  return `${fn}@${file}:${f.line ?? 0}`;
}

const MASKS: [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b[a-z]{2,8}_[0-9A-Za-z]{8,}\b/g, '<id>'],
  [/\b[^\s@]+@[^\s@]+\.[a-z]{2,}\b/gi, '<email>'],
  [/\b(?:\d{1,3}\.){3}\d{1,3}\b/g, '<ip>'],
  [/\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi, '<hex>'],
  [/\d+(?:\.\d+)?/g, '<n>'],
];

/** The message with what varies between occurrences of one error masked. */
export function maskMessage(message: string): string {
  let m = message.trim();
  for (const [re, to] of MASKS) m = m.replace(re, to);
  return m;
}

function firstLine(s: string, max = 200): string {
  const line = s.split('\n', 1)[0].trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Groups one error: `frames` innermost first (already parsed from a stack, or a Sentry event's). */
export function group(input: { message: string; type: string | null; frames: Frame[]; topFrames: number }): Grouping {
  const top = input.frames
    .map(normalFrame)
    .filter((f): f is string => f !== null)
    .slice(0, input.topFrames);
  const basis = top.length ? top.join('\n') : maskMessage(input.message);
  const fingerprint = createHash('sha256')
    .update(`${input.type ?? ''}\n${top.length ? 'frames' : 'message'}\n${basis}`)
    .digest('base64url')
    .slice(0, 32);
  const msg = firstLine(input.message);
  const inner = input.frames.find((f) => normalFrame(f) !== null);
  return {
    fingerprint,
    type: input.type,
    title: input.type && !msg.startsWith(input.type) ? `${input.type}: ${msg}` : msg,
    culprit: inner ? `${inner.fn ?? '?'} (${inner.file}:${inner.line ?? 0})` : null,
  };
}
