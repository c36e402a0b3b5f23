import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { FakeServer, words, type Script } from './script.js';
import { inlineImages } from './gemini-images.js';

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

function error(res: ServerResponse, status: number, message: string, retryAfter?: string) {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
  res.end(JSON.stringify({ error: { code: status, message, status: STATUS[status] ?? 'UNKNOWN' } }));
}

const chunk = (res: ServerResponse, data: unknown) => res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);

/**
 * A fake of the Gemini API (v1beta) on loopback: `x-goog-api-key` (or `?key=`), generateContent,
 * streamGenerateContent?alt=sse (CRLF-separated events, no terminator: the last carries
 * finishReason and usageMetadata), functionCall parts, batchEmbedContents, Google error bodies
 * (a bad key is 400 INVALID_ARGUMENT).
 */
export function geminiFake(opts: { key?: string } = {}): FakeServer {
  return new FakeServer(async (req, res, s: Script) => {
    const key = req.headers['x-goog-api-key'];
    if (opts.key && key !== opts.key) return error(res, 400, 'API key not valid. Please pass a valid API key.');
    if (s.status) return error(res, s.status, s.status === 429 ? 'Resource has been exhausted (e.g. check quota).' : 'An internal error has occurred.', s.retryAfter);
    if (req.method === 'GET' && req.path.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ models: [{ name: 'models/gemini-2.5-flash' }] }));
    }
    const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/.exec(req.path);
    if (req.method !== 'POST' || !m) return error(res, 404, `Unknown path ${req.path}`);
    const [, model, method] = m;
    const b = req.body;
    if (method === 'batchEmbedContents') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ embeddings: b.requests.map((r: any) => {
        const h = createHash('sha256').update(r.content.parts[0].text).digest();
        return { values: Array.from({ length: r.outputDimensionality ?? 8 }, (_, i) => (h[i % 32] - 128) / 128) };
      }) }));
    }
    if (!Array.isArray(b?.contents) || b.contents.some((c: any) => !['user', 'model'].includes(c.role))) return error(res, 400, 'Please use a valid role: user, model.');
    const seen = inlineImages(b.contents, (st, m) => error(res, st, m));
    if (seen === null) return;
    const content = s.content ?? seen ?? 'Hello from fake-gemini.';
    const usageMetadata = { promptTokenCount: s.usage?.input ?? 9, candidatesTokenCount: s.usage?.output ?? words(content).length, totalTokenCount: 0 };
    usageMetadata.totalTokenCount = usageMetadata.promptTokenCount + usageMetadata.candidatesTokenCount;
    const lastIsResult = JSON.stringify(b.contents.at(-1)).includes('functionResponse');
    const tool = b.tools?.[0]?.functionDeclarations?.length && !lastIsResult ? { name: b.tools[0].functionDeclarations[0].name, args: { city: 'Paris' } } : undefined;
    const modelVersion = model;
    if (method === 'generateContent') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const parts = tool ? [{ functionCall: tool }] : [{ text: content }];
      return res.end(JSON.stringify({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (tool) {
      chunk(res, { candidates: [{ content: { role: 'model', parts: [{ functionCall: tool }] }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion });
      return res.end();
    }
    const parts = words(content);
    for (const [i, p] of parts.entries()) {
      if (s.stallAfter !== undefined && i === s.stallAfter) return;
      if (s.malformedAfter !== undefined && i === s.malformedAfter) return void res.end('data: {"candidates": [\r\n\r\n');
      if (s.cutAfter !== undefined && i === s.cutAfter) return void res.end();
      const last = i === parts.length - 1;
      chunk(res, { candidates: [{ content: { role: 'model', parts: [{ text: p }] }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }], ...(last ? { usageMetadata } : {}), modelVersion });
      await new Promise((ok) => setImmediate(ok));
    }
    res.end();
  });
}
