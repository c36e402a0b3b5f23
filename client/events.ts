import { pageQuery, seg, type Requester } from './call.js';
import type {
  CreatedEventEndpoint,
  CreateEventEndpointRequest,
  EventEndpoint,
  EventEndpointPage,
  EventTypeList,
} from './events-types.js';
import { paginate } from './paginate.js';
import type { ListQuery, OkResponse, RequestOptions } from './types.js';

/** `client.events.endpoints`: where the gateway pushes its events, as Standard Webhooks (docs/events.md). */
export class EventEndpointsApi {
  constructor(private readonly call: Requester) {}

  /** Register an endpoint. The answer's `secret` (`whsec_…`) is shown this once: store it. */
  create(body: CreateEventEndpointRequest, opts: RequestOptions = {}): Promise<CreatedEventEndpoint> {
    return this.call('POST', '/v1/events/endpoints', { ...opts, body });
  }

  /** One page of the endpoints, newest first. */
  list(query: ListQuery = {}, opts: RequestOptions = {}): Promise<EventEndpointPage> {
    return this.call('GET', '/v1/events/endpoints', { ...opts, query: pageQuery(query) });
  }

  iterate(query: Omit<ListQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncIterableIterator<EventEndpoint> {
    return paginate((cursor) => this.list({ ...query, cursor }, opts));
  }

  get(id: string, opts: RequestOptions = {}): Promise<EventEndpoint> {
    return this.call('GET', `/v1/events/endpoints/${seg(id)}`, opts);
  }

  /** Delete an endpoint; its deliveries still pending are not sent. */
  delete(id: string, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('DELETE', `/v1/events/endpoints/${seg(id)}`, opts);
  }
}

/** `client.events`: the event types the gateway emits, and the endpoints they are delivered to. */
export class EventsApi {
  readonly endpoints: EventEndpointsApi;

  constructor(private readonly call: Requester) {
    this.endpoints = new EventEndpointsApi(call);
  }

  /** Every event type (`email.delivered`, `sms.failed`…) with what it means. */
  types(opts: RequestOptions = {}): Promise<EventTypeList> {
    return this.call('GET', '/v1/events/types', opts);
  }
}
