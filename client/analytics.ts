import { seg, type Requester } from './call.js';
import type {
  AnalyticsEvent,
  AnalyticsPerson,
  CohortRequest,
  CohortResponse,
  FunnelRequest,
  FunnelResponse,
  IdentifyRequest,
  TrackResponse,
} from './analytics-types.js';
import type { OkResponse, RequestOptions } from './types.js';

/** `client.analytics`: product events, people, funnels and retention cohorts (docs/analytics.md). */
export class AnalyticsApi {
  constructor(private readonly call: Requester) {}

  /** Record one event or a list (at most 1,000); an event whose `uuid` was stored before is not stored again. */
  track(events: AnalyticsEvent | AnalyticsEvent[], opts: RequestOptions = {}): Promise<TrackResponse> {
    return this.call('POST', '/v1/analytics/track', { ...opts, body: events });
  }

  /** Merge an anonymous id into a user (counted as one person) and set traits. */
  identify(body: IdentifyRequest, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('POST', '/v1/analytics/identify', { ...opts, body });
  }

  person(distinctId: string, opts: RequestOptions = {}): Promise<AnalyticsPerson> {
    return this.call('GET', `/v1/analytics/people/${seg(distinctId)}`, opts);
  }

  /** People who did the steps in order within the window (docs/analytics.md, Funnels). */
  funnel(body: FunnelRequest, opts: RequestOptions = {}): Promise<FunnelResponse> {
    return this.call('POST', '/v1/analytics/funnel', { ...opts, body });
  }

  /** Retention of the people who did an event in the first period (docs/analytics.md, Cohorts). */
  cohort(body: CohortRequest, opts: RequestOptions = {}): Promise<CohortResponse> {
    return this.call('POST', '/v1/analytics/cohort', { ...opts, body });
  }
}
