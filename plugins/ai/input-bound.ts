import type { ChatMessage, ResponseFormat, Tool, ToolChoice } from '../../core/kit/area.js';

/** An upper bound of the tokens a text costs: byte-level tokenizers never use more tokens than bytes. */
export function tokenBound(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** What a chat sends beside its messages that vendors also bill as input. */
export interface BilledExtras {
  tools?: Tool[];
  response_format?: ResponseFormat;
  tool_choice?: ToolChoice;
  stop?: string[];
}

/**
 * The input tokens a chat's reservation covers: every field a vendor bills as input, not only
 * the messages. Tool definitions and a `json_schema` response format go into the prompt (a
 * 100 KB schema costs as much as 100 KB of messages; Anthropic even sends it as a tool), and
 * so do `tool_choice` and stop sequences. Images are added where they are read (vision).
 */
export function chatInputBound(messages: ChatMessage[], extras: BilledExtras): number {
  const perMessage = messages.reduce(
    (n, m) =>
      n
      + 4
      + tokenBound(m.content ?? '')
      + tokenBound(JSON.stringify(m.tool_calls ?? ''))
      + tokenBound(m.tool_call_id ?? ''),
    8
  );
  const { tools, response_format, tool_choice, stop } = extras;
  const billed = { tools, response_format, tool_choice, stop };
  return perMessage + (Object.values(billed).some((v) => v !== undefined) ? tokenBound(JSON.stringify(billed)) : 0);
}
