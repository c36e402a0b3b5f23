import type { ServerResponse } from 'node:http';
import { FakeServer, sse, words, type Script } from './script.js';
import { AnthropicBatchFake } from './anthropic-batches.js';
import { imageBlocks } from './anthropic-images.js';

const ERR: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error' };

function error(res: ServerResponse, status: number, message: string, retryAfter?: string) {
  res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
  res.end(JSON.stringify({ type: 'error', error: { type: ERR[status] ?? 'api_error', message } }));
}

/**
 * A fake of Anthropic's Messages API on loopback: x-api-key or Bearer auth, anthropic-version,
 * required max_tokens, top-level system, tool_use blocks, the streaming event sequence
 * (message_start, content_block_start, ping, content_block_delta, content_block_stop,
 * message_delta, message_stop), `event: error` mid-stream, 529 overloaded, image blocks (anthropic-images.ts).
 */
export function anthropicFake(opts: { key?: string } = {}): FakeServer & { batches: AnthropicBatchFake } {
  const batches = new AnthropicBatchFake(() => fake.url);
  const fake = new FakeServer(async (req, res, s: Script) => {
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    if (opts.key && key !== opts.key) return error(res, 401, 'invalid x-api-key');
    if (s.status) return error(res, s.status, s.status === 529 ? 'Overloaded' : s.status === 429 ? 'Number of requests has exceeded your rate limit' : 'Internal server error', s.retryAfter);
    if (req.method === 'GET' && req.path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ data: [{ type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5' }], has_more: false }));
    }
    if (!req.headers['anthropic-version'] && req.path.startsWith('/v1/messages')) return error(res, 400, 'anthropic-version: header is required');
    if (batches.handle(req, res)) return;
    if (req.method !== 'POST' || req.path !== '/v1/messages') return error(res, 404, `Unknown path ${req.path}`);
    const b = req.body;
    if (!req.headers['anthropic-version']) return error(res, 400, 'anthropic-version: header is required');
    if (typeof b?.max_tokens !== 'number') return error(res, 400, 'max_tokens: Field required');
    if (b.messages?.some((m: any) => m.role === 'system')) return error(res, 400, 'messages: Unexpected role "system". Use the top-level `system` parameter.');
    const seen = imageBlocks(b.messages, (st, m) => error(res, st, m));
    if (seen === null) return;
    const content = s.content ?? seen ?? 'Hello from fake-anthropic.';
    const parts = words(content);
    const usage = { input_tokens: s.usage?.input ?? 14, output_tokens: s.usage?.output ?? parts.length, cache_creation_input_tokens: s.usage?.cacheWrite ?? 0, cache_read_input_tokens: s.usage?.cacheRead ?? 0 };
    const id = `msg_${Math.random().toString(36).slice(2)}`;
    const tool = s.toolCall ?? (b.tools?.length && !JSON.stringify(b.messages.at(-1)).includes('tool_result') ? { name: b.tools[0].name, arguments: '{"city":"Paris"}' } : undefined);
    if (!b.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const blocks = tool ? [{ type: 'tool_use', id: 'toolu_1', name: tool.name, input: JSON.parse(tool.arguments) }] : [{ type: 'text', text: content }];
      return res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model: b.model, content: blocks, stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null, usage }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const ev = (type: string, data: Record<string, unknown>) => sse(res, { type, ...data }, type);
    ev('message_start', { message: { id, type: 'message', role: 'assistant', model: b.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
    if (tool) {
      ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: tool.name, input: {} } });
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: tool.arguments } });
    } else {
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev('ping', {});
      for (const [i, p] of parts.entries()) {
        if (s.stallAfter !== undefined && i === s.stallAfter) return;
        if (s.malformedAfter !== undefined && i === s.malformedAfter) {
          ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
          return void res.end();
        }
        if (s.cutAfter !== undefined && i === s.cutAfter) return void res.end();
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: p } });
        await new Promise((ok) => setImmediate(ok));
      }
    }
    ev('content_block_stop', { index: 0 });
    ev('message_delta', { delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    ev('message_stop', {});
    res.end();
  });
  return Object.assign(fake, { batches });
}
