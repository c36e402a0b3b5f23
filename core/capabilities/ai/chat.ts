// The chat contracts the AI area calls and AI vendor adapters implement: `ai.chat`
// (ChatInput -> ChatOutput), `ai.chat.stream` (ChatInput -> AsyncIterable<ChatStreamEvent>),
// `ai.embed` (EmbedInput -> EmbedOutput) and `ai.vision` (ChatInput whose user turns carry
// `images` -> ChatOutput). Images are ./image.ts. Area and adapters both import these types.

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Images attached to a user turn (the `ai.vision` capability): already fetched and checked. */
  images?: InlineImage[];
}

/** An image as bytes: the area fetches URLs through the egress guard, so vendors never reach a caller's URL. */
export interface InlineImage {
  mime: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
  /** Standard base64, no data: prefix. */
  data: string;
}

export interface Tool {
  type: 'function';
  /** `strict` (OpenAI's structured tool arguments) reaches vendors speaking OpenAI's wire only. */
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** OpenAI's `json_schema` response format: the wire's `response_format.json_schema`, as OpenAI defines it. */
export interface JsonSchemaFormat {
  name: string;
  description?: string;
  /** JSON Schema of the answer; absent means any JSON object. */
  schema?: Record<string, unknown>;
  strict?: boolean;
}

export interface ResponseFormat {
  type: 'text' | 'json_object' | 'json_schema';
  /** Only with `type: json_schema`. */
  json_schema?: JsonSchemaFormat;
}

/** OpenAI's `tool_choice`: `none`, `auto`, `required` (some tool), or one function by name. */
export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** What one candidate (vendor instance) is asked to do, decided by the area's planner. */
export interface CandidatePlan {
  model: string;
  /** Micro-USD per million tokens of the vendor (0 with BYOK: the caller pays the vendor). */
  price_in: number;
  price_out: number;
  /**
   * A flat fee in micro-USD per call (BYOK platform fee), for the area's own records. Not part
   * of the vendor's price: the router adds the credentials provider's fee, without the markup.
   */
  fee: number;
  /** The caller's own credentials for this vendor (BYOK), decrypted for this call only. */
  credentials?: Record<string, string>;
  /** Micro-USD per generated image (`ai.image`). */
  price_image?: number;
}

export interface ChatInput {
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  tools?: Tool[];
  response_format?: ResponseFormat;
  /** Only with `tools`. */
  tool_choice?: ToolChoice;
  /** Sequences that end the answer (not included in it). */
  stop?: string[];
  /**
   * OpenAI request fields the gateway does not act on itself (`reasoning_effort`, `seed`,
   * `top_p`, penalties…), from the OpenAI surface: sent as they are to vendors speaking
   * OpenAI's wire, ignored by the others.
   */
  openai_params?: Record<string, unknown>;
  /** `vendor`: let the vendor cache the prompt (Anthropic gets cache_control hints). */
  cache_strategy?: 'vendor' | 'service' | 'none';
  /** Token counts the reservation is made for: an upper bound of the input, and the output cap. */
  estimate: Usage;
}

export interface ChatOutput {
  content: string | null;
  finish_reason: string;
  tool_calls?: ToolCall[];
  usage: Usage;
  model: string;
}

/** One piece of a streamed answer, in the adapter's arrival order. */
export interface ChatStreamEvent {
  delta?: string;
  tool_calls?: Array<{ index: number; id?: string; name?: string; arguments?: string }>;
  finish_reason?: string;
  usage?: Usage;
  model?: string;
}

export interface EmbedInput {
  input: string[];
  dimensions?: number;
  estimate: Usage;
}

export interface EmbedOutput {
  embeddings: number[][];
  model: string;
  usage: Usage;
}
