import { VendorFailure } from '../router/failure.js';

export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Parse a text/event-stream body into events (blank-line separated, multi-line data joined).
 * The body is a web stream (fetch) or a Node stream (undici's request): both iterate as chunks.
 */
export async function* readSse(body: AsyncIterable<Uint8Array> | null, vendor: string): AsyncGenerator<SseEvent> {
  if (!body) throw new VendorFailure('unavailable', `${vendor} sent an empty stream`);
  const decoder = new TextDecoder();
  let buf = '';
  let event: string | undefined;
  let data: string[] = [];
  const chunks = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      let chunk;
      try {
        chunk = await chunks.next();
      } catch (e) {
        if ((e as Error).name === 'AbortError') throw e;
        throw new VendorFailure('unavailable', `${vendor}: the stream broke off (${(e as Error).message})`, {
          cause: e,
        });
      }
      if (chunk.done) break;
      buf += decoder.decode(chunk.value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        if (line === '') {
          if (data.length) yield { event, data: data.join('\n') };
          event = undefined;
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
        } else if (line.startsWith('event:')) {
          event = line.slice(6).trim();
        }
        // Any other line (a `:` comment such as a keep-alive, an `id:` or `retry:` field) is ignored.
      }
    }
    if (data.length) yield { event, data: data.join('\n') };
  } finally {
    // Stops the body (cancels a web stream, destroys a Node one) when the reader leaves early.
    await chunks.return?.().catch(() => undefined);
  }
}

export function parseChunk<T>(data: string, vendor: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new VendorFailure('unavailable', `${vendor} sent a malformed stream event`);
  }
}
