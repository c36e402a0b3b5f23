import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { FakeServer, sse, words, type Script } from './script.js';
import { OpenAiBatchFake } from './openai-batches.js';
import { audioRoute } from './openai-audio.js';
import { imagesGenerations, visionParts } from './openai-images.js';
import { OpenAiImageUploadFake } from './openai-image-uploads.js';
import { cutAtStop, sample } from './json-sample.js';

const ERR_TYPE: Record<number, [string, string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['permission_denied', null],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
  500: ['server_error', null],
  503: ['server_error', null],
};

function error(res: ServerResponse, status: number, message: string, retryAfter?: string) {
  const [type, code] = ERR_TYPE[status] ?? ['server_error', null];
  res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

/** response_format, tool_choice and stop as OpenAI checks them, in its words. */
function chatProblem(b: any): string | undefined {
  const f = b.response_format;
  if (f?.type === 'json_schema' && !f.json_schema) return "Missing required parameter: 'response_format.json_schema'.";
  if (f?.type === 'json_schema' && typeof f.json_schema.name !== 'string')
    return "Missing required parameter: 'response_format.json_schema.name'.";
  const c = b.tool_choice;
  if (c !== undefined && !b.tools?.length)
    return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.";
  if (typeof c === 'object' && !b.tools.some((t: any) => t.function.name === c.function?.name))
    return `Invalid value for 'tool_choice': no function named '${c.function?.name}' was specified in the 'tools' parameter.`;
  if (typeof c === 'string' && !['none', 'auto', 'required'].includes(c))
    return `Invalid value: '${c}'. Supported values are: 'none', 'auto', and 'required'.`;
  const stops = typeof b.stop === 'string' ? [b.stop] : b.stop;
  if (stops !== undefined && (!Array.isArray(stops) || stops.length > 4))
    return "Invalid 'stop': expected a string or an array of at most 4 strings.";
  return undefined;
}

/** The tool call the model makes: the one tool_choice names or requires, none under `none`, else the script's or the first tool. */
function toolCall(b: any, s: Script): { name: string; arguments: string } | undefined {
  const c = b.tool_choice;
  if (c === 'none') return undefined;
  if (typeof c === 'object') return { name: c.function.name, arguments: s.toolCall?.arguments ?? '{"city":"Paris"}' };
  const first = b.tools?.length ? { name: b.tools[0].function.name, arguments: '{"city":"Paris"}' } : undefined;
  if (c === 'required') return s.toolCall ?? first;
  return s.toolCall ?? (b.messages.at(-1)?.role !== 'tool' ? first : undefined);
}

/** What a JSON mode answers: an object fitting the json_schema, `{"ok":true}` for json_object. */
function jsonAnswer(f: any): string | undefined {
  if (f?.type === 'json_object') return '{"ok":true}';
  return f?.type === 'json_schema' ? JSON.stringify(sample(f.json_schema.schema ?? { type: 'object' })) : undefined;
}

function vector(text: string, dims: number): number[] {
  const h = createHash('sha256').update(text).digest();
  return Array.from({ length: dims }, (_, i) => (h[i % 32] - 128) / 128);
}

/**
 * A fake of OpenAI's API on loopback, speaking its real wire format: chat.completion,
 * chat.completion.chunk SSE ending in `data: [DONE]` (with the usage chunk when
 * stream_options.include_usage), streamed tool_calls, tool_choice, stop, JSON modes
 * (json_schema answers an object fitting the schema), embeddings, models, error bodies,
 * image_url content parts and /images/generations (openai-images.ts), /images/edits and
 * /images/variations (openai-image-uploads.ts).
 */
export function openAiFake(
  opts: { key?: string; name?: string } = {}
): FakeServer & { batches: OpenAiBatchFake; uploads: OpenAiImageUploadFake } {
  const batches = new OpenAiBatchFake();
  const uploads = new OpenAiImageUploadFake();
  const fake: FakeServer = new FakeServer(async (req, res, s: Script) => {
    const auth = req.headers.authorization;
    if (opts.key && auth !== `Bearer ${opts.key}`)
      return error(res, 401, `Incorrect API key provided: ${String(auth).slice(7, 12)}***.`);
    if (s.status)
      return error(
        res,
        s.status,
        s.status === 429 ? 'Rate limit reached for requests' : 'The server had an error while processing your request.',
        s.retryAfter
      );
    if (req.method === 'GET' && req.path.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          object: 'list',
          data: [{ id: 'gpt-4o-mini', object: 'model', created: 1700000000, owned_by: 'openai' }],
        })
      );
    }
    if (batches.handle(req, res)) return;
    if (await audioRoute(req, res, s, error)) return;
    if (req.method === 'POST' && req.path.endsWith('/embeddings')) {
      const inputs: string[] = Array.isArray(req.body.input) ? req.body.input : [req.body.input];
      res.writeHead(200, { 'content-type': 'application/json' });
      const tokens = inputs.reduce((n, i) => n + words(i).length, 0);
      return res.end(
        JSON.stringify({
          object: 'list',
          model: req.body.model,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
          data: inputs.map((t, index) => ({
            object: 'embedding',
            index,
            embedding: vector(t, req.body.dimensions ?? 8),
          })),
        })
      );
    }
    if (await uploads.handle(req, res, (st, m) => error(res, st, m))) return;
    if (req.method === 'POST' && req.path.endsWith('/images/generations'))
      return imagesGenerations(req.body, res, (st, m) => error(res, st, m));
    if (req.method !== 'POST' || !req.path.endsWith('/chat/completions'))
      return error(res, 404, `Unknown path ${req.path}`);
    const b = req.body;
    if (!b?.model || !Array.isArray(b.messages)) return error(res, 400, "Missing required parameter: 'messages'.");
    const problem = chatProblem(b);
    if (problem) return error(res, 400, problem);
    const seen = visionParts(b.messages, (st, m) => error(res, st, m));
    if (seen === null) return;
    const content = cutAtStop(
      s.content ?? seen ?? jsonAnswer(b.response_format) ?? `Hello from ${opts.name ?? 'fake-openai'}.`,
      typeof b.stop === 'string' ? [b.stop] : b.stop
    ).text;
    const parts = words(content);
    const usage = { prompt_tokens: s.usage?.input ?? 12, completion_tokens: s.usage?.output ?? parts.length };
    const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
    const created = Math.floor(Date.now() / 1000);
    const tool = toolCall(b, s);
    if (!b.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const message = tool
        ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: tool }] }
        : { role: 'assistant', content };
      return res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: b.model,
          choices: [{ index: 0, message, logprobs: null, finish_reason: tool ? 'tool_calls' : 'stop' }],
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        })
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      sse(res, {
        id,
        object: 'chat.completion.chunk',
        created,
        model: b.model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      });
    chunk({ role: 'assistant', content: '' });
    if (tool) {
      chunk({
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: tool.name, arguments: '' } }],
      });
      const half = Math.ceil(tool.arguments.length / 2);
      chunk({ tool_calls: [{ index: 0, function: { arguments: tool.arguments.slice(0, half) } }] });
      chunk({ tool_calls: [{ index: 0, function: { arguments: tool.arguments.slice(half) } }] });
    } else {
      for (const [i, p] of parts.entries()) {
        if (s.stallAfter !== undefined && i === s.stallAfter) return;
        if (s.malformedAfter !== undefined && i === s.malformedAfter) return void res.end('data: {"id": broken\n\n');
        if (s.cutAfter !== undefined && i === s.cutAfter) return void res.end();
        chunk({ content: p });
        await new Promise((ok) => setImmediate(ok));
      }
    }
    chunk({}, tool ? 'tool_calls' : 'stop');
    if (b.stream_options?.include_usage)
      sse(res, {
        id,
        object: 'chat.completion.chunk',
        created,
        model: b.model,
        choices: [],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      });
    sse(res, '[DONE]');
    res.end();
  });
  return Object.assign(fake, { batches, uploads });
}
