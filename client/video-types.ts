import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type { CancelResult, GenerateBody, JobListQuery, VideoJob as VideoJobSchema } from '../plugins/video/schemas.js';
import type { PageOf } from './paginate.js';

// The AI video area's wire, from the TypeBox schemas the server validates and serializes with.

export type GenerateVideoRequest = Static<typeof GenerateBody>;
export type VideoJob = Static<typeof VideoJobSchema>;
export type VideoJobState = VideoJob['state'];
export type CancelVideoResponse = Static<typeof CancelResult>;
export type VideoJobPage = PageOf<VideoJob>;
/** `limit` (1 to 200, default 50), `cursor`, and a `state` to keep. */
export type VideoJobListQuery = Partial<Static<typeof JobListQuery>>;
