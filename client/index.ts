// svc-gateway/client: a typed client of the gateway that runs wherever fetch does
// (Node 20+, browsers, workers). It has no run-time dependency on the server's code.
export { SvcClient, type SvcClientOptions } from './svc-client.js';
export { paginate, type PageOf } from './paginate.js';
export { SvcError } from './errors.js';
export type { EmailApi } from './email.js';
export type { EmailDomainsApi, EmailSuppressionsApi } from './email-setup.js';
export type { EmailTemplatesApi } from './email-templates.js';
export type { SmsApi } from './sms.js';
export type { EventsApi, EventEndpointsApi } from './events.js';
export type { RealtimeApi } from './realtime.js';
export type { BillingApi } from './billing.js';
export type { VideoApi } from './video.js';
export type * from './types.js';
export type * from './email-types.js';
export type * from './sms-types.js';
export type * from './events-types.js';
export type * from './realtime-types.js';
export type { PublicUrlApi } from './public-url.js';
export type * from './public-url-types.js';
export type * from './billing-types.js';
export type { CaptchaApi, CaptchaSiteKeysApi } from './captcha.js';
export type * from './captcha-types.js';
export type { ObservabilityApi, FlagsApi } from './observability.js';
export type * from './observability-types.js';
export type * from './video-types.js';
export type { AnalyticsApi } from './analytics.js';
export type * from './analytics-types.js';
