import { type ResponseFormat, type Tool, type ToolChoice, fieldError } from '../../core/kit/area.js';
import type { ChatBodyT } from './schemas.js';

// What the chat schemas cannot say: `response_format.json_schema` is a free object on the
// native wire, and `tool_choice` must name one of `tools`. Checked before any vendor is
// asked, so every vendor gets the same request and a bad one is a 400 that charges nothing.

/** OpenAI's rule for the names of functions and JSON schemas; Anthropic's tool names follow it too. */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The wire's response_format as the adapters get it. `json_schema` is OpenAI's object
 * `{ name, description?, schema?, strict? }` on both surfaces; it is dropped from the other types.
 */
export function responseFormat(f: ChatBodyT['response_format']): ResponseFormat | undefined {
  if (!f) return undefined;
  if (f.type !== 'json_schema') return { type: f.type };
  const p = 'response_format.json_schema';
  const js = f.json_schema;
  if (!js) throw fieldError(p, 'is required with type json_schema: { name, schema, description?, strict? }');
  if (typeof js.name !== 'string' || !NAME.test(js.name))
    throw fieldError(`${p}.name`, 'must be 1 to 64 letters, digits, _ or -');
  if (js.schema !== undefined && !isObject(js.schema)) throw fieldError(`${p}.schema`, 'must be a JSON Schema object');
  if (js.description !== undefined && typeof js.description !== 'string')
    throw fieldError(`${p}.description`, 'must be a string');
  if (js.strict != null && typeof js.strict !== 'boolean') throw fieldError(`${p}.strict`, 'must be a boolean');
  return {
    type: 'json_schema',
    json_schema: {
      name: js.name as string,
      ...(js.description !== undefined ? { description: js.description as string } : {}),
      ...(js.schema !== undefined ? { schema: js.schema as Record<string, unknown> } : {}),
      ...(js.strict != null ? { strict: js.strict as boolean } : {}),
    },
  };
}

/** `tool_choice` against the tools it chooses from: `none` and `auto` without tools mean nothing and are dropped. */
export function toolChoice(choice: ToolChoice | undefined, tools: Tool[] | undefined): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (!tools?.length) {
    if (choice === 'none' || choice === 'auto') return undefined;
    throw fieldError('tool_choice', 'asks for a tool call but the request has no tools');
  }
  if (typeof choice === 'object' && !tools.some((t) => t.function.name === choice.function.name)) {
    throw fieldError(
      'tool_choice.function.name',
      `names no function in tools (${tools.map((t) => t.function.name).join(', ')})`
    );
  }
  return choice;
}
