import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  Endpoint,
  EndpointCreateBody,
  EndpointCreated,
  EventTypes,
} from '../plugins/scheduling/events-schemas.js';
import type { PageOf } from './paginate.js';

// The event endpoints' wire (the scheduling area serves them), from the server's TypeBox schemas.

export type CreateEventEndpointRequest = Static<typeof EndpointCreateBody>;
export type EventEndpoint = Static<typeof Endpoint>;
/** The endpoint with its `whsec_` signing secret, which only the create answer carries. */
export type CreatedEventEndpoint = Static<typeof EndpointCreated>;
export type EventEndpointPage = PageOf<EventEndpoint>;
export type EventTypeList = Static<typeof EventTypes>;
