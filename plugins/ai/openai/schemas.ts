import { Type, type Static } from '@sinclair/typebox';

// OpenAI's request shapes, as loose as OpenAI's own SDK sends them: fields this gateway does
// not use (n, top_p, seed, user…) are accepted and ignored so existing clients keep working.

const TextPart = Type.Object({ type: Type.String(), text: Type.Optional(Type.String()) });

export const OaMessage = Type.Object({
  role: Type.Union(['system', 'developer', 'user', 'assistant', 'tool'].map((r) => Type.Literal(r))),
  content: Type.Optional(Type.Union([Type.String(), Type.Null(), Type.Array(TextPart)])),
  tool_calls: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.Optional(Type.Literal('function')),
        function: Type.Object({ name: Type.String(), arguments: Type.String() }),
      })
    )
  ),
  tool_call_id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});

export const OaChatBody = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      description: 'A catalog model id, or `auto`, `cheapest`, `smartest` to let the gateway route.',
    }),
    messages: Type.Array(OaMessage, { minItems: 1 }),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(
      Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }), Type.Null()])
    ),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    tools: Type.Optional(
      Type.Array(
        Type.Object({
          type: Type.Literal('function'),
          function: Type.Object({
            name: Type.String({ minLength: 1 }),
            description: Type.Optional(Type.String()),
            parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
            strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
          }),
        })
      )
    ),
    response_format: Type.Optional(
      Type.Object({
        type: Type.Union([Type.Literal('text'), Type.Literal('json_object'), Type.Literal('json_schema')]),
        json_schema: Type.Optional(
          Type.Object({
            name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-zA-Z0-9_-]+$' }),
            description: Type.Optional(Type.String()),
            schema: Type.Optional(
              Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the answer.' })
            ),
            strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
          })
        ),
      })
    ),
    tool_choice: Type.Optional(
      Type.Union(
        [
          Type.Literal('none'),
          Type.Literal('auto'),
          Type.Literal('required'),
          Type.Object({
            type: Type.Literal('function'),
            function: Type.Object({ name: Type.String({ minLength: 1 }) }),
          }),
          Type.Null(),
        ],
        { description: '`none`, `auto`, `required`, or `{ type: function, function: { name } }`; needs `tools`.' }
      )
    ),
    stop: Type.Optional(
      Type.Union(
        [Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { maxItems: 4 }), Type.Null()],
        { description: 'Up to 4 sequences that end the answer.' }
      )
    ),
    // Not OpenAI's: the gateway's own cache, as on /v1/ai/chat. The openai SDK sends it when
    // a caller adds it to the body (an extra param in TypeScript needs a cast or `// @ts-expect-error`).
    cache_strategy: Type.Optional(
      Type.Union([Type.Literal('vendor'), Type.Literal('service'), Type.Literal('none')], {
        default: 'vendor',
        description: "Gateway extension: `service` answers an identical repeat from the gateway's cache.",
      })
    ),
  },
  { additionalProperties: true }
);
export type OaChatBodyT = Static<typeof OaChatBody>;

export const OaEmbedBody = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'A catalog embedding model, or `auto` to let the gateway route.' }),
    // Text only: token arrays (number[] / number[][]) are tokenizer-specific and every vendor
    // but OpenAI takes text, so they are refused (see the route) rather than guessed at.
    input: Type.Union([
      Type.String({ minLength: 1 }),
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 2048 }),
    ]),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
  },
  { additionalProperties: true }
);
export type OaEmbedBodyT = Static<typeof OaEmbedBody>;
