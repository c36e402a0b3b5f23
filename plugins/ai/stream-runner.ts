import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  apiError,
  isApiError,
  type ApiError,
  VendorFailure,
  keepIdempotentResponse,
  type StreamSession,
  type ChatInput,
  type ChatStreamEvent,
  type ToolCall,
  type Usage,
} from '../../core/kit/area.js';
import type { AiService, ChatRequest, Prepared } from './service.js';
import type { ChatResultT } from './schemas.js';

export interface StreamEnd {
  finish_reason: string;
  usage: Usage;
  metadata: ChatResultT['metadata'];
}

/** How one surface (native SSE, OpenAI chunks) writes a stream. */
export interface StreamWriter {
  head(vendor: string): Record<string, string>;
  event(ev: ChatStreamEvent): string;
  end(e: StreamEnd): string;
  error(e: ApiError): string;
}

/**
 * Forward a started stream to the caller and charge for what was produced: the vendor's
 * usage when it reported one, else the chunks sent (about a token each) and a quarter of the
 * input bound. A failure after the first token ends the stream with the writer's error event.
 */
export async function runStream(
  req: FastifyRequest,
  reply: FastifyReply,
  ai: AiService,
  p: Prepared<ChatInput>,
  session: StreamSession<ChatStreamEvent, Usage>,
  writer: StreamWriter,
  started: number,
  onComplete?: (r: ChatResultT) => Promise<void>
): Promise<void> {
  // The meter's signal aborts when the caller goes away (core/http/meter-headers.ts).
  const client = req.meter.signal;
  const res = openSse(req, reply, writer, session.vendor);
  let produced = 0;
  let usage: Usage | undefined;
  let finish = 'stop';
  let text = '';
  const calls: ToolCall[] = [];
  const take = (ev: ChatStreamEvent) => {
    if (ev.usage) usage = ev.usage;
    if (ev.finish_reason) finish = ev.finish_reason;
    if (ev.delta || ev.tool_calls?.length) {
      produced++;
      text += ev.delta ?? '';
      for (const d of ev.tool_calls ?? []) {
        const c = (calls[d.index] ??= { id: '', name: '', arguments: '' });
        if (d.id) c.id = d.id;
        if (d.name) c.name = d.name;
        c.arguments += d.arguments ?? '';
      }
      if (!res.destroyed) res.write(writer.event(ev));
    }
  };
  const charge = () =>
    session.settle(usage ?? { input_tokens: Math.ceil(p.input.estimate.input_tokens / 4), output_tokens: produced });
  try {
    take(session.first);
    for (;;) {
      const r = await session.rest.next();
      if (r.done) break;
      take(r.value);
    }
    const cost = await charge();
    const u = usage ?? { input_tokens: Math.ceil(p.input.estimate.input_tokens / 4), output_tokens: produced };
    const metadata = ai.metadata(p, session.vendor, session.attempts, performance.now() - started, cost);
    const toolCalls = calls.filter(Boolean);
    // Stored before the stream ends, so a caller who repeats the request on seeing [DONE]
    // gets the cached answer.
    await onComplete?.({
      content: text || (toolCalls.length ? null : ''),
      finish_reason: finish,
      ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
      usage: { ...u, total_tokens: u.input_tokens + u.output_tokens },
      metadata,
    }).catch((e) => req.log.warn({ err: e }, 'storing a streamed answer (cache, idempotency key) failed'));
    res.end(writer.end({ finish_reason: finish, usage: u, metadata }));
  } catch (err) {
    const reason = session.signal.aborted ? session.signal.reason : err;
    await charge().catch((e) => req.log.error({ err: e }, 'settling a broken stream failed'));
    if (client?.aborted) {
      res.destroy();
      return;
    }
    const e = isApiError(reason)
      ? reason
      : reason instanceof VendorFailure && reason.kind === 'timeout'
        ? apiError('vendor_timeout', `${session.vendor} did not finish the stream in time.`, {
            details: { vendor: session.vendor, tokens_sent: produced },
          })
        : apiError(
            'vendor_error',
            `${session.vendor} failed after the stream began: ${(reason as Error)?.message ?? reason}`,
            { details: { vendor: session.vendor, tokens_sent: produced } }
          );
    req.log.warn({ vendor: session.vendor, code: e.code, msg: e.message }, 'stream failed after the first token');
    res.end(writer.error(e));
  } finally {
    session.close();
  }
}

function openSse(
  req: FastifyRequest,
  reply: FastifyReply,
  writer: StreamWriter,
  vendor: string,
  extra: Record<string, string> = {}
) {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-request-id': req.id,
    ...writer.head(vendor),
    ...extra,
  });
  return res;
}

/**
 * An answer already made as a stream: the whole content in one event, then the end. For a
 * cached answer (`cache_strategy: service`) and for the replay of an idempotency key.
 */
export function replayStream(
  req: FastifyRequest,
  reply: FastifyReply,
  writer: StreamWriter,
  hit: ChatResultT,
  headers: Record<string, string> = {}
): void {
  const res = openSse(req, reply, writer, hit.metadata.vendor, headers);
  const tool_calls = hit.tool_calls?.map((c, index) => ({ index, id: c.id, name: c.name, arguments: c.arguments }));
  res.write(writer.event({ delta: hit.content ?? '', ...(tool_calls?.length ? { tool_calls } : {}) }));
  res.end(writer.end({ finish_reason: hit.finish_reason, usage: hit.usage, metadata: hit.metadata }));
}

/**
 * A chat streamed to the caller in a surface's format, through the service cache when the
 * body asks for `cache_strategy: service`: a hit is replayed, a finished stream is stored.
 * `writer` gets the model that answers (the cached one on a hit).
 */
export async function streamChat(
  req: FastifyRequest,
  reply: FastifyReply,
  ai: AiService,
  body: ChatRequest,
  writer: (model: string | undefined) => StreamWriter
): Promise<void> {
  const started = performance.now();
  const hash = body.cache_strategy === 'service' ? ai.cacheKey(req, body) : undefined;
  const hit = hash ? await ai.cached(req, hash) : undefined;
  if (hit) {
    // Kept for the key as any answer is: a retry replays it rather than paying the cache again.
    await keepIdempotentResponse(req.server.svc, req, 200, JSON.stringify(hit));
    return replayStream(req, reply, writer(hit.metadata.model), hit);
  }
  const { p, session } = await ai.openStream(req, { ...body, stream: true });
  // A finished stream is also kept for its idempotency key's replays (routes that honour
  // keys; see replayIdempotent); a broken one gives the key back (the onResponse release).
  await runStream(req, reply, ai, p, session, writer(p.modelOf(session.vendor)), started, async (r) => {
    if (hash) await ai.cache.put(req.principal!.accountId, hash, r);
    await keepIdempotentResponse(req.server.svc, req, 200, JSON.stringify(r), true);
  });
}
