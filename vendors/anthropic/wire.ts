import {
  VendorFailure,
  type ChatInput,
  type ChatOutput,
  type ChatStreamEvent,
  readSse,
  parseChunk,
} from '../../core/kit/vendor.js';
import { anthropicTools } from './tools.js';

// Anthropic's Messages API wire format: the system prompt is top-level, tool results are
// user-role `tool_result` blocks, `max_tokens` is required. `answer` names the tool a JSON
// mode's answer comes in (tools.ts): its input is the content, not a tool call.

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string }
  | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } };

const STOP: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function finishReason(stop: string | null | undefined): string {
  return (stop && STOP[stop]) ?? 'stop';
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return {};
  }
}

export function messagesRequest(
  input: ChatInput,
  model: string,
  maxTokens: number,
  stream: boolean
): Record<string, unknown> {
  const system = input.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content ?? '')
    .join('\n\n');
  const messages: Array<{ role: 'user' | 'assistant'; content: Block[] }> = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    const last = messages[messages.length - 1];
    // Anthropic wants alternating roles: consecutive same-role turns become one.
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const m of input.messages) {
    if (m.role === 'system') continue;
    if (m.role === 'tool') {
      push('user', [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: m.content ?? '' }]);
    } else if (m.role === 'assistant') {
      const blocks: Block[] = m.content ? [{ type: 'text', text: m.content }] : [];
      for (const t of m.tool_calls ?? [])
        blocks.push({ type: 'tool_use', id: t.id, name: t.name, input: parseArgs(t.arguments) });
      push('assistant', blocks);
    } else {
      // Vision: image blocks before the text, as Anthropic recommends.
      const images = (m.images ?? []).map(
        (i): Block => ({ type: 'image', source: { type: 'base64', media_type: i.mime, data: i.data } })
      );
      push('user', [...images, { type: 'text', text: m.content ?? '' }]);
    }
  }
  const body: Record<string, unknown> = { model, max_tokens: maxTokens, messages };
  // Prompt caching: mark the system prompt (the part that repeats across calls) cacheable.
  if (system)
    body.system =
      input.cache_strategy === 'vendor'
        ? [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }]
        : system;
  if (input.temperature !== undefined) body.temperature = Math.min(1, input.temperature);
  Object.assign(body, anthropicTools(input));
  if (input.stop?.length) body.stop_sequences = input.stop;
  if (stream) body.stream = true;
  return body;
}

interface AnUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/**
 * Anthropic's input_tokens leave out cached tokens; bill them as the equivalent full-price
 * input: a cache write costs 1.25× an input token, a cache read 0.1×.
 */
export function inputTokens(u: AnUsage | undefined): number {
  return (
    (u?.input_tokens ?? 0)
    + Math.ceil((u?.cache_creation_input_tokens ?? 0) * 1.25)
    + Math.ceil((u?.cache_read_input_tokens ?? 0) * 0.1)
  );
}

interface AnMessage {
  model?: string;
  content?: Block[];
  stop_reason?: string | null;
  usage?: AnUsage;
}

export function messagesResponse(j: AnMessage, model: string, vendor: string, answer?: string): ChatOutput {
  if (!Array.isArray(j.content)) throw new VendorFailure('unavailable', `${vendor} answered without content`);
  const text = j.content
    .filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('');
  const uses = j.content.filter((b): b is Extract<Block, { type: 'tool_use' }> => b.type === 'tool_use');
  const json = answer ? uses.find((b) => b.name === answer) : undefined;
  const calls = uses
    .filter((b) => b !== json)
    .map((b) => ({ id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) }));
  return {
    content: json ? JSON.stringify(json.input ?? {}) : text || (calls.length ? null : ''),
    // Calling the answer tool is answering: `stop`, not `tool_calls`.
    finish_reason: json && !calls.length && j.stop_reason === 'tool_use' ? 'stop' : finishReason(j.stop_reason),
    ...(calls.length ? { tool_calls: calls } : {}),
    usage: { input_tokens: inputTokens(j.usage), output_tokens: j.usage?.output_tokens ?? 0 },
    model: j.model ?? model,
  };
}

interface AnEvent {
  type: string;
  index?: number;
  message?: { model?: string; usage?: AnUsage };
  content_block?: { type: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: { output_tokens?: number };
  error?: { type?: string; message?: string };
}

/** message_start … message_stop; `event: error` mid-stream and a stream without message_stop are failures. */
export async function* messagesStream(
  body: AsyncIterable<Uint8Array> | null,
  vendor: string,
  answer?: string
): AsyncGenerator<ChatStreamEvent> {
  let input = 0;
  let output = 0;
  let stop: string | undefined;
  let model: string | undefined;
  const toolIndex = new Map<number, number>();
  // The answer tool's block: its input_json_delta fragments are the content.
  let answerBlock: number | undefined;
  let answered = false;
  for await (const ev of readSse(body, vendor)) {
    const e = parseChunk<AnEvent>(ev.data, vendor);
    switch (e.type) {
      case 'message_start':
        input = inputTokens(e.message?.usage);
        output = e.message?.usage?.output_tokens ?? 0;
        model = e.message?.model;
        break;
      case 'content_block_start':
        if (e.content_block?.type === 'tool_use' && answer !== undefined && e.content_block.name === answer)
          answerBlock = e.index ?? 0;
        else if (e.content_block?.type === 'tool_use') {
          const idx = toolIndex.size;
          toolIndex.set(e.index ?? 0, idx);
          yield {
            tool_calls: [{ index: idx, id: e.content_block.id, name: e.content_block.name, arguments: '' }],
            model,
          };
        }
        break;
      case 'content_block_delta':
        // A forced tool use writes no text beside it, so the answer's fragments are all the content.
        if (answerBlock !== undefined && (e.index ?? 0) === answerBlock) {
          if (e.delta?.partial_json) {
            answered = true;
            yield { delta: e.delta.partial_json, model };
          }
        } else if (e.delta?.type === 'text_delta' && e.delta.text) yield { delta: e.delta.text, model };
        else if (e.delta?.type === 'input_json_delta')
          yield { tool_calls: [{ index: toolIndex.get(e.index ?? 0) ?? 0, arguments: e.delta.partial_json ?? '' }] };
        break;
      case 'message_delta':
        if (e.delta?.stop_reason) stop = e.delta.stop_reason;
        if (e.usage?.output_tokens !== undefined) output = e.usage.output_tokens;
        break;
      case 'content_block_stop':
        // An empty input streams no fragment at all; the answer is still an object.
        if (answerBlock !== undefined && (e.index ?? 0) === answerBlock && !answered) {
          answered = true;
          yield { delta: '{}', model };
        }
        break;
      case 'message_stop': {
        const finish =
          answerBlock !== undefined && !toolIndex.size && stop === 'tool_use' ? 'stop' : finishReason(stop);
        yield { finish_reason: finish, usage: { input_tokens: input, output_tokens: output }, model };
        return;
      }
      case 'error':
        throw new VendorFailure('unavailable', `${vendor} stream error: ${e.error?.message ?? 'unknown'}`);
      default:
        break; // ping
    }
  }
  throw new VendorFailure('unavailable', `${vendor}: the stream ended without message_stop`);
}
