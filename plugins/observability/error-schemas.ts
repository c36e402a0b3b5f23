import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Page } from '../../core/kit/area.js';

export const Tags = Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ maxLength: 1000 }), {
  maxProperties: 50,
  description: 'Map of string to string (at most 50).',
});

export const ErrorBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 8192, description: 'What went wrong.' }),
    code: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "The error's code or class; groups like an exception type when the stack names none.",
      })
    ),
    stack: Type.Optional(
      Type.String({ maxLength: 1_048_576, description: 'Stack trace text (V8 or Firefox/Safari format).' })
    ),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false }
);
export type ErrorBodyT = Static<typeof ErrorBody>;

export const ErrorResult = Type.Object({
  ok: Type.Boolean(),
  error_id: Type.String(),
  issue_id: Type.String({ description: 'The issue the error was grouped into.' }),
});

export const IssueStatus = Type.Union([Type.Literal('unresolved'), Type.Literal('resolved'), Type.Literal('ignored')], {
  description: 'unresolved, resolved (reopens when the error recurs) or ignored (counted, never reopened).',
});

export const Issue = Type.Object({
  issue_id: Type.String(),
  title: Type.String(),
  type: Type.Union([Type.String(), Type.Null()]),
  culprit: Type.Union([Type.String(), Type.Null()], { description: 'Innermost frame of the code, `fn (file:line)`.' }),
  status: IssueStatus,
  count: Type.Integer(),
  first_seen: Type.String(),
  last_seen: Type.String(),
});

export const IssueList = Page(Issue);

export const IssueListQuery = Type.Composite([ListQuery, Type.Object({ status: Type.Optional(IssueStatus) })], {
  additionalProperties: false,
});

export const IssueParams = Type.Object({ issue_id: Type.String() }, { additionalProperties: false });

export const IssueUpdate = Type.Object({ status: IssueStatus }, { additionalProperties: false });

export const ErrorEvent = Type.Object({
  error_id: Type.String(),
  issue_id: Type.String(),
  message: Type.String(),
  code: Type.Union([Type.String(), Type.Null()]),
  stack: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Record(Type.String(), Type.String()),
  source: Type.String({ description: '`api` (POST /v1/observability/errors) or `sentry` (a Sentry SDK).' }),
  created_at: Type.String(),
});

export const ErrorEventList = Page(ErrorEvent);
