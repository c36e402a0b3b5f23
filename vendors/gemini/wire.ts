import {
  VendorFailure,
  type ChatInput,
  type ChatOutput,
  type ChatStreamEvent,
  type ToolCall,
  type ToolChoice,
  readSse,
  parseChunk,
} from '../../core/kit/vendor.js';
import { toGeminiSchema } from './schema.js';

// Gemini's generateContent wire format: roles `user` / `model`, a top-level
// `systemInstruction`, `functionCall` / `functionResponse` parts, `generationConfig`.

type Part = {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: { name: string; args?: unknown };
  functionResponse?: { name: string; response: unknown };
};
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

const FINISH: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  BLOCKLIST: 'content_filter',
};

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return {};
  }
}

/**
 * Gemini 2.5 and later take `responseJsonSchema`, a JSON Schema as the caller wrote it; the
 * older models know only `responseSchema`, an OpenAPI subset the schema is converted to.
 */
const OPENAPI_SCHEMA_ONLY = /^(models\/)?gemini-(1\.|2\.0)/;

/** generationConfig's JSON fields for a response_format: the MIME type, and the schema when there is one. */
function jsonMode(f: ChatInput['response_format'], model: string): Record<string, unknown> {
  if (!f || f.type === 'text') return {};
  const schema = f.type === 'json_schema' ? f.json_schema?.schema : undefined;
  if (!schema) return { responseMimeType: 'application/json' };
  return OPENAPI_SCHEMA_ONLY.test(model)
    ? { responseMimeType: 'application/json', responseSchema: toGeminiSchema(schema) }
    : { responseMimeType: 'application/json', responseJsonSchema: schema };
}

function functionCalling(c: ToolChoice): Record<string, unknown> {
  if (c === 'none') return { mode: 'NONE' };
  if (c === 'auto') return { mode: 'AUTO' };
  if (c === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [c.function.name] };
}

export function generateRequest(input: ChatInput, model: string): Record<string, unknown> {
  const names = new Map<string, string>(); // tool call id -> function name, for functionResponse
  const contents: Content[] = [];
  const push = (role: Content['role'], parts: Part[]) => {
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of input.messages) {
    if (m.role === 'system') continue;
    if (m.role === 'assistant') {
      const parts: Part[] = m.content ? [{ text: m.content }] : [];
      for (const t of m.tool_calls ?? []) {
        names.set(t.id, t.name);
        parts.push({ functionCall: { name: t.name, args: parseArgs(t.arguments) } });
      }
      push('model', parts);
    } else if (m.role === 'tool') {
      const name = names.get(m.tool_call_id ?? '') ?? m.tool_call_id ?? 'tool';
      push('user', [{ functionResponse: { name, response: { content: m.content ?? '' } } }]);
    } else {
      push('user', [
        ...(m.images ?? []).map((i) => ({ inlineData: { mimeType: i.mime, data: i.data } })),
        { text: m.content ?? '' },
      ]);
    }
  }
  const body: Record<string, unknown> = { contents };
  const system = input.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content ?? '')
    .join('\n\n');
  if (system) body.systemInstruction = { parts: [{ text: system }] };
  const gen: Record<string, unknown> = {};
  if (input.temperature !== undefined) gen.temperature = input.temperature;
  if (input.max_tokens !== undefined) gen.maxOutputTokens = input.max_tokens;
  if (input.stop?.length) gen.stopSequences = input.stop;
  Object.assign(gen, jsonMode(input.response_format, model));
  if (Object.keys(gen).length) body.generationConfig = gen;
  if (input.tools?.length) {
    body.tools = [
      {
        functionDeclarations: input.tools.map((t) => ({
          name: t.function.name,
          description: t.function.description,
          parameters: t.function.parameters,
        })),
      },
    ];
    if (input.tool_choice) body.toolConfig = { functionCallingConfig: functionCalling(input.tool_choice) };
  }
  return body;
}

interface GenResponse {
  candidates?: Array<{ content?: { parts?: Part[] }; finishReason?: string }>;
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number };
  modelVersion?: string;
  error?: { message?: string };
}

function calls(parts: Part[], offset = 0): ToolCall[] {
  return parts
    .filter((p) => p.functionCall)
    .map((p, i) => ({
      id: `call_${offset + i}`,
      name: p.functionCall!.name,
      arguments: JSON.stringify(p.functionCall!.args ?? {}),
    }));
}

export function generateResponse(j: GenResponse, model: string, vendor: string): ChatOutput {
  const c = j.candidates?.[0];
  if (!c) throw new VendorFailure('unavailable', `${vendor} answered without a candidate`);
  const parts = c.content?.parts ?? [];
  const tc = calls(parts);
  return {
    content: parts.map((p) => p.text ?? '').join('') || (tc.length ? null : ''),
    finish_reason: tc.length ? 'tool_calls' : (FINISH[c.finishReason ?? 'STOP'] ?? 'stop'),
    ...(tc.length ? { tool_calls: tc } : {}),
    usage: {
      input_tokens: j.usageMetadata?.promptTokenCount ?? 0,
      output_tokens: j.usageMetadata?.candidatesTokenCount ?? 0,
    },
    model: j.modelVersion ?? model,
  };
}

/** streamGenerateContent?alt=sse: each event a GenerateContentResponse; the one with finishReason ends it. */
export async function* generateStream(
  body: AsyncIterable<Uint8Array> | null,
  vendor: string
): AsyncGenerator<ChatStreamEvent> {
  let finished = false;
  let toolIndex = 0;
  let usage: ChatStreamEvent['usage'];
  let finish: string | undefined;
  for await (const ev of readSse(body, vendor)) {
    const j = parseChunk<GenResponse>(ev.data, vendor);
    if (j.error) throw new VendorFailure('unavailable', `${vendor} stream error: ${j.error.message ?? 'unknown'}`);
    const c = j.candidates?.[0];
    const parts = c?.content?.parts ?? [];
    const text = parts.map((p) => p.text ?? '').join('');
    const tc = calls(parts, toolIndex);
    if (text) yield { delta: text };
    if (tc.length) {
      yield {
        tool_calls: tc.map((t, i) => ({ index: toolIndex + i, id: t.id, name: t.name, arguments: t.arguments })),
      };
      toolIndex += tc.length;
    }
    if (j.usageMetadata)
      usage = {
        input_tokens: j.usageMetadata.promptTokenCount ?? 0,
        output_tokens: j.usageMetadata.candidatesTokenCount ?? 0,
      };
    if (c?.finishReason) {
      finished = true;
      finish = toolIndex ? 'tool_calls' : (FINISH[c.finishReason] ?? 'stop');
    }
  }
  if (!finished) throw new VendorFailure('unavailable', `${vendor}: the stream ended without a finishReason`);
  yield { finish_reason: finish, ...(usage ? { usage } : {}) };
}
