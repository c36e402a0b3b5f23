import { seg, type Requester } from './call.js';
import type {
  CreateFlagRequest,
  ErrorEventPage,
  FeatureFlag,
  FeatureFlagPage,
  FlagAuditPage,
  FlagEvaluation,
  IssuePage,
  IssueStatus,
  MetricPointRequest,
  MetricQueryRequest,
  MetricSeriesResponse,
  ObservabilityEventRequest,
  ObservabilityIssue,
  ReportErrorRequest,
  ReportErrorResponse,
  SentryDsn,
  UpdateFlagRequest,
} from './observability-types.js';
import type { ListQuery, OkResponse, RequestOptions } from './types.js';

/** `client.observability.flags`: feature flags, their evaluation, versions and audit. */
export class FlagsApi {
  constructor(private readonly call: Requester) {}

  /** Evaluate for a context: `distinct_id` (what rollouts bucket by) and attributes. */
  evaluate(key: string, context: Record<string, string> = {}, opts: RequestOptions = {}): Promise<FlagEvaluation> {
    return this.call('GET', `/v1/observability/flags/${seg(key)}`, { ...opts, query: context });
  }

  create(body: CreateFlagRequest, opts: RequestOptions = {}): Promise<FeatureFlag> {
    return this.call('POST', '/v1/observability/flags', { ...opts, body });
  }

  get(key: string, opts: RequestOptions = {}): Promise<FeatureFlag> {
    return this.call('GET', `/v1/observability/flags/${seg(key)}/definition`, opts);
  }

  list(query: ListQuery = {}, opts: RequestOptions = {}): Promise<FeatureFlagPage> {
    return this.call('GET', '/v1/observability/flags', { ...opts, query: { ...query } });
  }

  /** Replace the definition; `version` is the one read (409 conflict if it changed since). */
  update(key: string, body: UpdateFlagRequest, opts: RequestOptions = {}): Promise<FeatureFlag> {
    return this.call('PUT', `/v1/observability/flags/${seg(key)}`, { ...opts, body });
  }

  delete(key: string, version?: number, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('DELETE', `/v1/observability/flags/${seg(key)}`, { ...opts, query: { version } });
  }

  audit(key: string, query: ListQuery = {}, opts: RequestOptions = {}): Promise<FlagAuditPage> {
    return this.call('GET', `/v1/observability/flags/${seg(key)}/audit`, { ...opts, query: { ...query } });
  }
}

/** `client.observability`: errors and issues, events, metrics, the Sentry DSN, flags (docs/observability.md). */
export class ObservabilityApi {
  readonly flags: FlagsApi;

  constructor(private readonly call: Requester) {
    this.flags = new FlagsApi(call);
  }

  reportError(body: ReportErrorRequest, opts: RequestOptions = {}): Promise<ReportErrorResponse> {
    return this.call('POST', '/v1/observability/errors', { ...opts, body });
  }

  issues(query: ListQuery & { status?: IssueStatus } = {}, opts: RequestOptions = {}): Promise<IssuePage> {
    return this.call('GET', '/v1/observability/issues', { ...opts, query: { ...query } });
  }

  issue(issueId: string, opts: RequestOptions = {}): Promise<ObservabilityIssue> {
    return this.call('GET', `/v1/observability/issues/${seg(issueId)}`, opts);
  }

  issueEvents(issueId: string, query: ListQuery = {}, opts: RequestOptions = {}): Promise<ErrorEventPage> {
    return this.call('GET', `/v1/observability/issues/${seg(issueId)}/events`, { ...opts, query: { ...query } });
  }

  setIssueStatus(issueId: string, status: IssueStatus, opts: RequestOptions = {}): Promise<ObservabilityIssue> {
    return this.call('PATCH', `/v1/observability/issues/${seg(issueId)}`, { ...opts, body: { status } });
  }

  sentryDsn(opts: RequestOptions = {}): Promise<SentryDsn> {
    return this.call('GET', '/v1/observability/sentry-dsn', opts);
  }

  event(body: ObservabilityEventRequest, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('POST', '/v1/observability/events', { ...opts, body });
  }

  /** One point or a list of up to 1,000, stored all or nothing. */
  metrics(points: MetricPointRequest | MetricPointRequest[], opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('POST', '/v1/observability/metrics', { ...opts, body: points });
  }

  queryMetrics(query: MetricQueryRequest, opts: RequestOptions = {}): Promise<MetricSeriesResponse> {
    return this.call('GET', '/v1/observability/metrics', { ...opts, query: { ...query } });
  }
}
