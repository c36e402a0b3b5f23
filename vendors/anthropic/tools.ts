import type { ChatInput, ToolChoice } from '../../core/kit/vendor.js';

// The caller's tools, `tool_choice` and JSON modes as Anthropic's `tools` and `tool_choice`.
//
// The Messages API has no response_format. A JSON mode becomes one more tool, the "answer
// tool", that the model is made to call; its input is the answer, handed back as the
// content (never as a tool call). `json_schema` gives the tool its schema; `json_object`
// gets a tool taking any object. The other way, a system instruction plus an assistant
// prefill of `{`, is refused with a 400 by the newer Claude models (Opus 4.6, Sonnet 4.6
// and later do not take prefills) and leaves the JSON to the model's goodwill, while a tool
// input is always a JSON object and streams as `input_json_delta` fragments just as well.
// (Anthropic's own structured outputs only serve some models; a forced tool serves all.)

type Shaping = Pick<ChatInput, 'response_format' | 'tools' | 'tool_choice'>;

export interface AnTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

const ANSWER = {
  json_object: "Give your whole answer as this tool's input: the one JSON object the conversation asks for.",
  json_schema: "Give your whole answer as this tool's input, following its schema.",
};

/** The answer tool a JSON mode needs, if this request needs one. */
export function answerTool(input: Shaping): AnTool | undefined {
  const f = input.response_format;
  if (!f || f.type === 'text') return undefined;
  // `required` or a named function asks for a tool call this turn, not an answer.
  const c = input.tool_choice;
  if (input.tools?.length && (c === 'required' || typeof c === 'object')) return undefined;
  const js = f.type === 'json_schema' ? f.json_schema : undefined;
  const taken = new Set(input.tools?.map((t) => t.function.name));
  let name = js?.name ?? 'json_answer';
  while (taken.has(name)) name = `_${name}`.slice(0, 64);
  return { name, description: js?.description ?? ANSWER[f.type], input_schema: js?.schema ?? { type: 'object' } };
}

function choice(c: ToolChoice): Record<string, unknown> {
  if (c === 'auto') return { type: 'auto' };
  if (c === 'required') return { type: 'any' };
  // Tools stay declared under `none`: earlier turns may hold tool_use blocks that name them.
  if (c === 'none') return { type: 'none' };
  return { type: 'tool', name: c.function.name };
}

/** `tools` and `tool_choice` for the Messages request; empty when neither is needed. */
export function anthropicTools(input: Shaping): { tools?: AnTool[]; tool_choice?: Record<string, unknown> } {
  const own: AnTool[] = (input.tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description,
    input_schema: t.function.parameters ?? { type: 'object', properties: {} },
  }));
  const answer = answerTool(input);
  if (answer) {
    // With the caller's tools on `auto` the model may call one of them or answer; `any`
    // makes it call some tool, so what it says is either a tool call or the JSON answer.
    const auto = own.length && (input.tool_choice ?? 'auto') === 'auto';
    return { tools: [...own, answer], tool_choice: auto ? { type: 'any' } : { type: 'tool', name: answer.name } };
  }
  if (!own.length) return {};
  return { tools: own, ...(input.tool_choice ? { tool_choice: choice(input.tool_choice) } : {}) };
}
