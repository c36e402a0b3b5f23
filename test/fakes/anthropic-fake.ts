import type { ServerResponse } from 'node:http';
import { FakeServer, sse, words, type Script } from './script.js';
import { AnthropicBatchFake } from './anthropic-batches.js';
import { imageBlocks } from './anthropic-images.js';
import { cutAtStop, sample } from './json-sample.js';

const ERR: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

function error(res: ServerResponse, status: number, message: string, retryAfter?: string) {
  res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
  res.end(JSON.stringify({ type: 'error', error: { type: ERR[status] ?? 'api_error', message } }));
}

/** A problem with the request's tools, tool_choice or stop_sequences, as Anthropic words its 400s. */
function toolsProblem(b: any): string | undefined {
  const c = b.tool_choice;
  if (c && !b.tools?.length) return 'tool_choice: tool_choice may only be specified while providing tools.';
  if (c && !['auto', 'any', 'tool', 'none'].includes(c.type))
    return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'";
  if (c?.type === 'tool' && !b.tools.some((t: any) => t.name === c.name))
    return `tool_choice.name: Tool '${c.name}' not found in tools`;
  const bad = (b.tools ?? []).findIndex((t: any) => t.input_schema?.type !== 'object');
  if (bad >= 0) return `tools.${bad}.custom.input_schema.type: Input should be 'object'`;
  if (new Set((b.tools ?? []).map((t: any) => t.name)).size !== (b.tools?.length ?? 0))
    return 'tools: Tool names must be unique.';
  if (
    b.stop_sequences !== undefined
    && (!Array.isArray(b.stop_sequences) || b.stop_sequences.some((x: unknown) => typeof x !== 'string'))
  )
    return 'stop_sequences: Input should be a valid list of strings';
  return undefined;
}

/**
 * The tool the model calls: the one `tool_choice: {type: tool}` names (its input fits its
 * schema), none under `none`, else the script's or the first tool unless a tool result was just given.
 */
function toolUse(b: any, s: Script): { name: string; arguments: string } | undefined {
  const c = b.tool_choice;
  if (c?.type === 'none') return undefined;
  if (c?.type === 'tool')
    return {
      name: c.name,
      arguments:
        s.toolCall?.arguments ?? JSON.stringify(sample(b.tools.find((t: any) => t.name === c.name).input_schema)),
    };
  const first = b.tools?.length ? { name: b.tools[0].name, arguments: '{"city":"Paris"}' } : undefined;
  if (c?.type === 'any') return s.toolCall ?? first;
  return s.toolCall ?? (!JSON.stringify(b.messages.at(-1)).includes('tool_result') ? first : undefined);
}

/** A tool input as the stream sends it: input_json_delta fragments of a few characters. */
function fragments(json: string): string[] {
  return json.match(/[\s\S]{1,6}/g) ?? [];
}

/**
 * A fake of Anthropic's Messages API on loopback: x-api-key or Bearer auth, anthropic-version,
 * required max_tokens, top-level system, tools with tool_choice (auto, any, tool, none) and
 * tool_use blocks, stop_sequences (stop_reason stop_sequence), the streaming event sequence
 * (message_start, content_block_start, ping, content_block_delta with text_delta or
 * input_json_delta fragments, content_block_stop, message_delta, message_stop), `event: error`
 * mid-stream, 529 overloaded, image blocks (anthropic-images.ts).
 */
export function anthropicFake(opts: { key?: string } = {}): FakeServer & { batches: AnthropicBatchFake } {
  const batches = new AnthropicBatchFake(() => fake.url);
  const fake = new FakeServer(async (req, res, s: Script) => {
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    if (opts.key && key !== opts.key) return error(res, 401, 'invalid x-api-key');
    if (s.status)
      return error(
        res,
        s.status,
        s.status === 529
          ? 'Overloaded'
          : s.status === 429
            ? 'Number of requests has exceeded your rate limit'
            : 'Internal server error',
        s.retryAfter
      );
    if (req.method === 'GET' && req.path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          data: [{ type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5' }],
          has_more: false,
        })
      );
    }
    if (!req.headers['anthropic-version'] && req.path.startsWith('/v1/messages'))
      return error(res, 400, 'anthropic-version: header is required');
    if (batches.handle(req, res)) return;
    if (req.method !== 'POST' || req.path !== '/v1/messages') return error(res, 404, `Unknown path ${req.path}`);
    const b = req.body;
    if (!req.headers['anthropic-version']) return error(res, 400, 'anthropic-version: header is required');
    if (typeof b?.max_tokens !== 'number') return error(res, 400, 'max_tokens: Field required');
    if (b.messages?.some((m: any) => m.role === 'system'))
      return error(res, 400, 'messages: Unexpected role "system". Use the top-level `system` parameter.');
    const problem = toolsProblem(b);
    if (problem) return error(res, 400, problem);
    const seen = imageBlocks(b.messages, (st, m) => error(res, st, m));
    if (seen === null) return;
    const cut = cutAtStop(s.content ?? seen ?? 'Hello from fake-anthropic.', b.stop_sequences);
    const content = cut.text;
    const parts = words(content);
    const usage = {
      input_tokens: s.usage?.input ?? 14,
      output_tokens: s.usage?.output ?? parts.length,
      cache_creation_input_tokens: s.usage?.cacheWrite ?? 0,
      cache_read_input_tokens: s.usage?.cacheRead ?? 0,
    };
    const id = `msg_${Math.random().toString(36).slice(2)}`;
    const tool = toolUse(b, s);
    const stopReason = tool ? 'tool_use' : cut.stop !== undefined ? 'stop_sequence' : 'end_turn';
    const stopSequence = tool ? null : (cut.stop ?? null);
    if (!b.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const blocks = tool
        ? [{ type: 'tool_use', id: 'toolu_1', name: tool.name, input: JSON.parse(tool.arguments) }]
        : [{ type: 'text', text: content }];
      return res.end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model: b.model,
          content: blocks,
          stop_reason: stopReason,
          stop_sequence: stopSequence,
          usage,
        })
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const ev = (type: string, data: Record<string, unknown>) => sse(res, { type, ...data }, type);
    ev('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: b.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    if (tool) {
      ev('content_block_start', {
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: tool.name, input: {} },
      });
      for (const f of fragments(tool.arguments))
        ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: f } });
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
    ev('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: stopSequence },
      usage: { output_tokens: usage.output_tokens },
    });
    ev('message_stop', {});
    res.end();
  });
  return Object.assign(fake, { batches });
}
