import { Type } from '@sinclair/typebox';
import { ERRORS } from '../errors.js';

/**
 * The conventions' error body (core/errors.ts `errorBody`), stated once as a schema: the
 * OpenAPI document publishes it as the shared component every error response refers to.
 */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({
        enum: Object.keys(ERRORS),
        description: 'Stable, machine-readable code; the catalogue is in core/errors.ts.',
      }),
      message: Type.String({ description: 'What went wrong and what to do about it, for a human.' }),
      status: Type.Integer({ description: 'The HTTP status, repeated.' }),
      request_id: Type.String({ description: 'Also in the x-request-id header; finds the request in the log.' }),
      param: Type.Optional(Type.String({ description: 'The first offending field, when one is to blame.' })),
      details: Type.Object(
        {},
        {
          additionalProperties: true,
          description: 'validation_failed: `errors` [{param, message}]; vendor_error: `attempts`.',
        }
      ),
    }),
  },
  { title: 'Error' }
);

/** Plain JSON (TypeBox's symbol keys dropped), as the document carries it. */
export function errorBodyJson(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(ErrorBody));
}
