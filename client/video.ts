import { seg, type Requester } from './call.js';
import { paginate } from './paginate.js';
import type { RequestOptions } from './types.js';
import type {
  CancelVideoResponse,
  GenerateVideoRequest,
  VideoJob,
  VideoJobListQuery,
  VideoJobPage,
} from './video-types.js';

/** `client.video`: text-to-video jobs (docs/video.md). */
export class VideoApi {
  constructor(private readonly call: Requester) {}

  /**
   * Start a job: answered `queued`, made by a vendor meanwhile (`get` shows the state, and once
   * `succeeded` its `video_url`). An `idempotencyKey` makes a retry answer the same job.
   */
  generate(body: GenerateVideoRequest, opts: RequestOptions = {}): Promise<VideoJob> {
    return this.call('POST', '/v1/video/generate', { ...opts, body });
  }

  get(jobId: string, opts: RequestOptions = {}): Promise<VideoJob> {
    return this.call('GET', `/v1/video/jobs/${seg(jobId)}`, opts);
  }

  /** One page of the account's jobs, newest first; `next_cursor` fetches the next. */
  list(query: VideoJobListQuery = {}, opts: RequestOptions = {}): Promise<VideoJobPage> {
    const { state, limit, cursor } = query;
    return this.call('GET', '/v1/video/jobs', { ...opts, query: { state, limit, cursor } });
  }

  /** Every job, page after page: `for await (const j of client.video.iterate({ state: 'running' })) …`. */
  iterate(query: Omit<VideoJobListQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncIterableIterator<VideoJob> {
    return paginate((cursor) => this.list({ ...query, cursor }, opts));
  }

  /** Cancel a queued or running job (nothing is charged); a finished one is 409 `invalid_state`. */
  cancel(jobId: string, opts: RequestOptions = {}): Promise<CancelVideoResponse> {
    return this.call('POST', `/v1/video/jobs/${seg(jobId)}/cancel`, { ...opts, body: {} });
  }
}
