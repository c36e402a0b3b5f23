import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  ErrorBody,
  ErrorEvent,
  ErrorResult,
  Issue,
  IssueStatus as IssueStatusSchema,
} from '../plugins/observability/error-schemas.js';
import type { EventBody, MetricPoint, MetricQuery, MetricSeries } from '../plugins/observability/metric-schemas.js';
import type { SentryDsn as SentryDsnSchema } from '../plugins/observability/sentry-routes.js';
import type {
  Evaluation,
  Flag,
  FlagAudit,
  FlagCreate,
  FlagUpdate,
} from '../plugins/observability/flags/flag-schemas.js';
import type { PageOf } from './paginate.js';

// The observability area's wire, from the TypeBox schemas the server validates and serializes with.

export type ReportErrorRequest = Static<typeof ErrorBody>;
export type ReportErrorResponse = Static<typeof ErrorResult>;
export type ObservabilityIssue = Static<typeof Issue>;
export type IssueStatus = Static<typeof IssueStatusSchema>;
export type IssuePage = PageOf<ObservabilityIssue>;
export type ErrorEventRecord = Static<typeof ErrorEvent>;
export type ErrorEventPage = PageOf<ErrorEventRecord>;
export type SentryDsn = Static<typeof SentryDsnSchema>;
export type ObservabilityEventRequest = Static<typeof EventBody>;
export type MetricPointRequest = Static<typeof MetricPoint>;
export type MetricQueryRequest = Partial<Pick<Static<typeof MetricQuery>, 'step' | 'agg' | 'group_by'>> &
  Pick<Static<typeof MetricQuery>, 'name' | 'from' | 'to'>;
export type MetricSeriesResponse = Static<typeof MetricSeries>;
export type FlagEvaluation = Static<typeof Evaluation>;
export type FeatureFlag = Static<typeof Flag>;
export type FeatureFlagPage = PageOf<FeatureFlag>;
export type CreateFlagRequest = Static<typeof FlagCreate>;
export type UpdateFlagRequest = Static<typeof FlagUpdate>;
export type FlagAuditPage = PageOf<Static<typeof FlagAudit>>;
