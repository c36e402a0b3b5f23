import type { AreaDefinition } from '../core/kit/area.js';
import account from './account/index.js';
import ai from './ai/index.js';
import byok from './byok/index.js';
import image from './image/index.js';
import pdf from './pdf/index.js';
import scheduling from './scheduling/index.js';
import storage from './storage/index.js';
import sms from './sms/index.js';
import email from './email/index.js';
import observability from './observability/index.js';
import billing from './billing/index.js';
import realtime from './realtime/index.js';
import publicUrl from './public-url/index.js';
import captcha from './captcha/index.js';
import video from './video/index.js';
import analytics from './analytics/index.js';

/** Areas that ship with the gateway; each is on unless `plugins.<name>: false`. */
export const builtinAreas: AreaDefinition<any>[] = [
  account,
  ai,
  byok,
  image,
  pdf,
  scheduling,
  storage,
  email,
  sms,
  observability,
  billing,
  realtime,
  publicUrl,
  captcha,
  video,
  analytics,
];
