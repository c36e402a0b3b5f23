import pino from 'pino';
import type { VendorDefinition, VendorInstance } from '../../core/define.js';
import type { CandidatePlan, ChatInput, ChatStreamEvent } from '../../core/capabilities/ai/chat.js';

// What the chat adapter tests share: an instance made straight from a vendor definition,
// a ChatInput, the plan the router would hand the instance, and a stream read to the end.

export const ctx = (id: string) => ({
  instanceId: id,
  fetch: globalThis.fetch,
  publicUrl: 'http://127.0.0.1',
  dataDir: '/tmp',
  log: pino({ level: 'silent' }),
});

export async function instance(
  def: VendorDefinition<any>,
  id: string,
  config: Record<string, unknown>
): Promise<VendorInstance> {
  return (await def.create(config as never, ctx(id))) as VendorInstance;
}

/** A system and a user turn for instance `id` (its plan names the model: see `signal`); `extra` overrides. */
export function chatInput(_id: string, _model: string, extra: Partial<ChatInput> = {}): ChatInput {
  return {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    estimate: { input_tokens: 100, output_tokens: 50 },
    max_tokens: 50,
    ...extra,
  };
}

/** The plan the router hands an instance asked for `model`. */
export const chatPlan = (model: string): CandidatePlan => ({
  model,
  price_in: 1_000_000,
  price_out: 2_000_000,
  fee: 0,
});

/** Invoke options for a call planned on `model`. */
export const signal = (model: string) => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 10_000,
  plan: chatPlan(model),
});

export async function collect(it: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** The streamed text, and the tool calls put back together by index. */
export function streamed(events: ChatStreamEvent[]) {
  const calls: Array<{ id?: string; name?: string; arguments: string }> = [];
  for (const d of events.flatMap((e) => e.tool_calls ?? [])) {
    const c = (calls[d.index] ??= { arguments: '' });
    if (d.id) c.id = d.id;
    if (d.name) c.name = d.name;
    c.arguments += d.arguments ?? '';
  }
  return { text: events.map((e) => e.delta ?? '').join(''), calls, finish: events.at(-1)?.finish_reason };
}

/** A JSON Schema with the keywords JSON Schema has and Gemini's OpenAPI subset lacks. */
export const PERSON_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Full name' },
    age: { type: ['integer', 'null'] },
    role: { const: 'admin' },
    address: { $ref: '#/$defs/address' },
  },
  required: ['name', 'age', 'role', 'address'],
  additionalProperties: false,
  $defs: {
    address: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};
