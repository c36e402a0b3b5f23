import { apiError } from '../../core/kit/area.js';
import type { Frame } from './fingerprint.js';

// The Sentry envelope format (develop.sentry.dev/sdk/envelopes): a JSON header line, then per
// item a JSON header line (`{"type","length"?}`) and its payload, `length` bytes when given,
// else up to the next newline. The whole envelope is parsed before anything is stored, so a
// malformed one stores nothing.

export interface EnvelopeItem {
  type: string;
  payload: Buffer;
}

export interface Envelope {
  header: Record<string, unknown>;
  items: EnvelopeItem[];
}

const malformed = (why: string) => apiError('invalid_request', `Malformed Sentry envelope: ${why}.`);

function jsonObject(bytes: Buffer, what: string): Record<string, any> {
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw malformed(`${what} is not JSON`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw malformed(`${what} is not a JSON object`);
  return v as Record<string, any>;
}

export function parseEnvelope(body: Buffer): Envelope {
  let at = 0;
  const line = (): Buffer => {
    const nl = body.indexOf(0x0a, at);
    const end = nl < 0 ? body.length : nl;
    const out = body.subarray(at, end);
    at = end + 1;
    return out;
  };
  const header = jsonObject(line(), 'the envelope header');
  const items: EnvelopeItem[] = [];
  while (at < body.length) {
    const h = line();
    if (h.length === 0 || (h.length === 1 && h[0] === 0x0d)) continue; // a trailing newline
    const ih = jsonObject(h, `item ${items.length + 1}'s header`);
    if (typeof ih.type !== 'string' || !ih.type) throw malformed(`item ${items.length + 1} has no type`);
    let payload: Buffer;
    if (ih.length !== undefined) {
      if (!Number.isInteger(ih.length) || ih.length < 0 || at + ih.length > body.length)
        throw malformed(`item ${items.length + 1}'s length is not the length of what follows`);
      payload = body.subarray(at, at + ih.length);
      at += ih.length;
      if (at < body.length && body[at] === 0x0a) at++;
    } else payload = line();
    items.push({ type: ih.type, payload });
  }
  return { header, items };
}

/** An error as a Sentry event carries it, in the shape IssueStore.record takes. */
export interface SentryError {
  message: string;
  type: string | null;
  frames: Frame[];
  stack?: string;
  tags: Record<string, string>;
}

function messageOf(ev: Record<string, any>): string | undefined {
  const m = ev.logentry ?? ev.message;
  if (typeof m === 'string') return m;
  if (m && typeof m === 'object') return m.formatted ?? m.message;
  return undefined;
}

function tagsOf(ev: Record<string, any>): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (k: unknown, v: unknown) => {
    if (typeof k === 'string' && k && v !== undefined && v !== null && Object.keys(out).length < 50)
      out[k.slice(0, 200)] = String(v).slice(0, 1000);
  };
  const tags = ev.tags;
  if (Array.isArray(tags)) for (const p of tags) if (Array.isArray(p)) put(p[0], p[1]);
  if (tags && typeof tags === 'object' && !Array.isArray(tags)) for (const [k, v] of Object.entries(tags)) put(k, v);
  put('environment', ev.environment);
  put('release', ev.release);
  put('platform', ev.platform);
  return out;
}

/** The error of an `event` item: its last (outermost) exception with frames innermost first, or its message. */
export function sentryError(payload: Buffer): SentryError {
  const ev = jsonObject(payload, 'an event item');
  const values = Array.isArray(ev.exception?.values)
    ? ev.exception.values
    : Array.isArray(ev.exception)
      ? ev.exception
      : [];
  const ex = values.length ? values[values.length - 1] : undefined;
  const tags = tagsOf(ev);
  if (!ex || typeof ex !== 'object') {
    const msg = messageOf(ev);
    return { message: (msg || '(no message)').slice(0, 8192), type: null, frames: [], tags };
  }
  const type = typeof ex.type === 'string' && ex.type ? ex.type.slice(0, 200) : null;
  const raw = Array.isArray(ex.stacktrace?.frames) ? ex.stacktrace.frames : [];
  // Sentry lists frames outermost first; grouping reads them innermost first, as stack text has them.
  const frames: Frame[] = raw
    .filter((f: any) => f && typeof f === 'object')
    .map((f: any) => ({
      fn: typeof f.function === 'string' ? f.function : undefined,
      file: typeof f.abs_path === 'string' ? f.abs_path : typeof f.filename === 'string' ? f.filename : undefined,
      line: Number.isInteger(f.lineno) ? f.lineno : undefined,
    }))
    .reverse();
  const value = typeof ex.value === 'string' ? ex.value : (messageOf(ev) ?? '');
  const message = (value || type || '(no message)').slice(0, 8192);
  const stack = [
    type ? `${type}: ${value}` : value,
    ...frames.map((f) => `    at ${f.fn ? `${f.fn} (` : ''}${f.file ?? '?'}:${f.line ?? 0}${f.fn ? ')' : ''}`),
  ].join('\n');
  return { message, type, frames, stack, tags };
}
