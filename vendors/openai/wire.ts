import {
  VendorFailure,
  type ChatInput,
  type ChatMessage,
  type ChatOutput,
  type ChatStreamEvent,
  type EmbedInput,
  type EmbedOutput,
  readSse,
  parseChunk,
} from '../../core/kit/vendor.js';

// OpenAI's Chat Completions and Embeddings wire format, shared by the `openai` adapter and
// every openai-compatible server.

type OaPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

interface OaMessage {
  role: string;
  content: string | null | OaPart[];
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

function toOaMessage(m: ChatMessage): OaMessage {
  // Vision: the text, then each image as a data: URL content part.
  const content: OaMessage['content'] = m.images?.length
    ? [
        { type: 'text', text: m.content ?? '' },
        ...m.images.map((i): OaPart => ({ type: 'image_url', image_url: { url: `data:${i.mime};base64,${i.data}` } })),
      ]
    : m.content;
  const out: OaMessage = { role: m.role, content };
  if (m.tool_calls?.length)
    out.tool_calls = m.tool_calls.map((t) => ({
      id: t.id,
      type: 'function',
      function: { name: t.name, arguments: t.arguments },
    }));
  if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
  return out;
}

/**
 * `maxField`: OpenAI itself wants `max_completion_tokens` (its reasoning models reject
 * `max_tokens`); most compatible servers only know `max_tokens`.
 */
export function chatRequest(
  input: ChatInput,
  model: string,
  stream: boolean,
  maxField: 'max_tokens' | 'max_completion_tokens' = 'max_tokens'
): Record<string, unknown> {
  // The OpenAI surface's pass-through fields first: every field the gateway sets wins.
  const body: Record<string, unknown> = { ...input.openai_params, model, messages: input.messages.map(toOaMessage) };
  if (input.temperature !== undefined) body.temperature = input.temperature;
  if (input.max_tokens !== undefined) body[maxField] = input.max_tokens;
  if (input.tools?.length) {
    body.tools = input.tools;
    if (input.tool_choice) body.tool_choice = input.tool_choice;
  }
  // Already OpenAI's shape: `{ type: 'json_schema', json_schema: { name, schema, strict? } }`.
  if (input.response_format) body.response_format = input.response_format;
  if (input.stop?.length) body.stop = input.stop;
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

interface OaCompletion {
  model?: string;
  choices?: Array<{ message?: OaMessage; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

export function chatResponse(j: OaCompletion, model: string, vendor: string): ChatOutput {
  const choice = j.choices?.[0];
  if (!choice?.message) throw new VendorFailure('unavailable', `${vendor} answered without a choice`);
  const calls = choice.message.tool_calls?.map((t) => ({
    id: t.id,
    name: t.function.name,
    arguments: t.function.arguments,
  }));
  return {
    content: typeof choice.message.content === 'string' ? choice.message.content : null,
    finish_reason: choice.finish_reason ?? 'stop',
    ...(calls?.length ? { tool_calls: calls } : {}),
    usage: { input_tokens: j.usage?.prompt_tokens ?? 0, output_tokens: j.usage?.completion_tokens ?? 0 },
    model: j.model ?? model,
  };
}

interface OaChunk {
  model?: string;
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

/** chat.completion.chunk events until `[DONE]`; a stream that ends without it is broken. */
export async function* chatStream(
  body: AsyncIterable<Uint8Array> | null,
  vendor: string
): AsyncGenerator<ChatStreamEvent> {
  let done = false;
  for await (const ev of readSse(body, vendor)) {
    if (ev.data === '[DONE]') {
      done = true;
      break;
    }
    const c = parseChunk<OaChunk>(ev.data, vendor);
    if (c.error) throw new VendorFailure('unavailable', `${vendor} stream error: ${c.error.message ?? 'unknown'}`);
    const out: ChatStreamEvent = {};
    if (c.model) out.model = c.model;
    const choice = c.choices?.[0];
    if (choice?.delta?.content) out.delta = choice.delta.content;
    if (choice?.delta?.tool_calls?.length) {
      out.tool_calls = choice.delta.tool_calls.map((t) => ({
        index: t.index,
        id: t.id,
        name: t.function?.name,
        arguments: t.function?.arguments,
      }));
    }
    if (choice?.finish_reason) out.finish_reason = choice.finish_reason;
    if (c.usage)
      out.usage = { input_tokens: c.usage.prompt_tokens ?? 0, output_tokens: c.usage.completion_tokens ?? 0 };
    if (out.delta !== undefined || out.tool_calls || out.finish_reason || out.usage) yield out;
  }
  if (!done) throw new VendorFailure('unavailable', `${vendor}: the stream ended without [DONE]`);
}

export function embedRequest(input: EmbedInput, model: string): Record<string, unknown> {
  return { model, input: input.input, ...(input.dimensions ? { dimensions: input.dimensions } : {}) };
}

export function embedResponse(
  j: { data?: Array<{ index: number; embedding: number[] }>; model?: string; usage?: { prompt_tokens?: number } },
  model: string,
  vendor: string
): EmbedOutput {
  if (!Array.isArray(j.data)) throw new VendorFailure('unavailable', `${vendor} answered without data`);
  const sorted = [...j.data].sort((a, b) => a.index - b.index);
  return {
    embeddings: sorted.map((d) => d.embedding),
    model: j.model ?? model,
    usage: { input_tokens: j.usage?.prompt_tokens ?? 0, output_tokens: 0 },
  };
}
