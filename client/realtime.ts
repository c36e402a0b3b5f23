import { pageQuery, seg, type Requester } from './call.js';
import { paginate } from './paginate.js';
import type {
  PresenceMembers,
  PublishRequest,
  PublishResponse,
  PusherCredentials,
  RealtimeChannel,
  RealtimeChannelPage,
  RealtimeChannelRequest,
  RealtimeToken,
  RealtimeTokenRequest,
} from './realtime-types.js';
import type { ListQuery, OkResponse, RequestOptions } from './types.js';

/** `client.realtime`: client tokens, channels, publishing and presence (docs/realtime.md). */
export class RealtimeApi {
  constructor(private readonly call: Requester) {}

  /** A short-lived token for a browser or app; it opens `${endpoint}?token=${token}`. */
  token(body: RealtimeTokenRequest = {}, opts: RequestOptions = {}): Promise<RealtimeToken> {
    return this.call('POST', '/v1/realtime/token', { ...opts, body });
  }

  /** Send an event to a channel's subscribers; an `idempotencyKey` makes a retry send nothing again. */
  publish(body: PublishRequest, opts: RequestOptions = {}): Promise<PublishResponse> {
    return this.call('POST', '/v1/realtime/publish', { ...opts, body });
  }

  createChannel(body: RealtimeChannelRequest, opts: RequestOptions = {}): Promise<RealtimeChannel> {
    return this.call('POST', '/v1/realtime/channels', { ...opts, body });
  }

  listChannels(query: ListQuery = {}, opts: RequestOptions = {}): Promise<RealtimeChannelPage> {
    return this.call('GET', '/v1/realtime/channels', { ...opts, query: pageQuery(query) });
  }

  iterateChannels(
    query: Omit<ListQuery, 'cursor'> = {},
    opts: RequestOptions = {}
  ): AsyncIterableIterator<RealtimeChannel> {
    return paginate((cursor) => this.listChannels({ ...query, cursor }, opts));
  }

  deleteChannel(name: string, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('DELETE', `/v1/realtime/channels/${seg(name)}`, opts);
  }

  /** Members of a presence channel, on every node. */
  presence(channel: string, opts: RequestOptions = {}): Promise<PresenceMembers> {
    return this.call('GET', `/v1/realtime/channels/${seg(channel)}/presence`, opts);
  }

  /** This account's Pusher app (id, key, secret) for pusher-js and the `pusher` server SDK. */
  pusherApp(opts: RequestOptions = {}): Promise<PusherCredentials> {
    return this.call('POST', '/v1/realtime/pusher', opts);
  }
}
