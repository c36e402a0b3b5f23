import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  apiError,
  decodeCursor,
  idempotentTransaction,
  iso,
  ListQuery,
  newId,
  Ok,
  pageOf,
  type ListQueryT,
  type Svc,
} from '../../core/kit/area.js';
import { typeByPrefix } from './channel-names.js';
import type { Channels } from './channels.js';
import { signClientToken } from './client-token.js';
import { limitsOf, type RealtimeConfigT } from './config.js';
import { Hub } from './hub.js';
import type { PusherApps } from './pusher-apps.js';
import type { SocketBounds } from './socket-io.js';
import {
  ChannelBody,
  ChannelList,
  ChannelParams,
  ChannelRecord,
  PresenceList,
  PublishBody,
  PublishResult,
  PusherApp,
  RealtimeToken,
  TokenBody,
  type ChannelBodyT,
  type PublishBodyT,
  type TokenBodyT,
} from './schemas.js';

const tags = ['realtime'];

export interface RealtimeDeps {
  svc: Svc;
  cfg: RealtimeConfigT;
  hub: Hub;
  channels: Channels;
  apps: PusherApps;
  /** The limits of one socket of `protocol`; its slow-consumer closes counted under that label. */
  bounds: (protocol: 'native' | 'pusher') => SocketBounds;
}

/** The WebSocket base of the gateway's public URL. */
export function wsBase(publicUrl: string): string {
  return publicUrl.replace(/^http/, 'ws');
}

/** 413 above the data cap, 429 over the tier's messages a second: before anything is written. */
export async function admitMessage(d: RealtimeDeps, accountId: string, tier: string, data: unknown): Promise<void> {
  const bytes = Buffer.byteLength(JSON.stringify(data ?? null));
  if (bytes > d.cfg.max_data_bytes)
    throw apiError(
      'payload_too_large',
      `data is ${bytes} bytes as JSON; a message carries at most ${d.cfg.max_data_bytes}.`,
      { param: 'data' }
    );
  const rate = limitsOf(d.cfg, tier).messages_per_second;
  const decision = await d.svc.rateLimits.take(`realtime:${accountId}`, { rate_per_minute: rate * 60, burst: rate });
  if (!decision.allowed)
    throw apiError(
      'rate_limited',
      `Over the ${tier} tier's ${rate} realtime messages a second. Retry in ${decision.retryAfterSeconds} s.`,
      { headers: { 'retry-after': String(decision.retryAfterSeconds) } }
    );
}

/** POST /v1/realtime/token, channels (create, list, delete), publish, presence, the Pusher app. */
export function registerRealtimeRoutes(app: FastifyInstance, d: RealtimeDeps): void {
  const { svc, cfg, hub, channels } = d;
  const acct = (req: FastifyRequest) => req.principal!.accountId;
  const perMessage = cfg.price_per_million_messages_usd / 1e6;

  app.post(
    '/v1/realtime/token',
    {
      config: { scope: 'realtime', operation: 'realtime.token' },
      schema: {
        summary: 'A short-lived client token for a browser or app to open a realtime socket',
        tags,
        body: TokenBody,
        response: { 200: RealtimeToken },
      },
    },
    async (req: FastifyRequest<{ Body: TokenBodyT }>) => {
      const b = req.body;
      const p = req.principal!;
      const client_id = newId('rtc');
      const { token, expiresAt } = signClientToken(
        svc,
        { a: p.accountId, c: client_id, tr: p.tier, u: b.user_id, ch: b.channels, p: b.publish || undefined },
        b.ttl_seconds ?? 3600
      );
      return {
        token,
        client_id,
        expires_at: iso(expiresAt),
        endpoint: `${wsBase(svc.config.server.public_url)}/v1/realtime/ws`,
      };
    }
  );

  app.post(
    '/v1/realtime/channels',
    {
      config: {
        scope: 'realtime',
        idempotent: true,
        operation: 'realtime.channels.create',
        errors: ['already_exists'],
      },
      schema: { summary: 'Declare a channel and its type', tags, body: ChannelBody, response: { 200: ChannelRecord } },
    },
    async (req: FastifyRequest<{ Body: ChannelBodyT }>, reply: FastifyReply) => {
      const { name, type } = req.body;
      const made = await idempotentTransaction(svc, req, reply, (trx) =>
        channels.create(trx, acct(req), name, type ?? typeByPrefix(name))
      );
      await channels.changed(acct(req), name);
      return made;
    }
  );

  app.get(
    '/v1/realtime/channels',
    {
      config: { scope: 'realtime', operation: 'realtime.channels.list' },
      schema: {
        summary: 'Declared channels, newest first',
        tags,
        querystring: ListQuery,
        response: { 200: ChannelList },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const { limit, cursor } = req.query;
      const rows = await channels.list(acct(req), limit + 1, decodeCursor(cursor));
      return pageOf(rows, limit, (r) => ({ t: Number(r.created_at), id: r.channel_id }), channels.wire);
    }
  );

  app.delete(
    '/v1/realtime/channels/:channel',
    {
      config: { scope: 'realtime', operation: 'realtime.channels.delete', errors: ['not_found'] },
      schema: {
        summary: 'Delete a declared channel: its history goes and its subscribers are unsubscribed',
        tags,
        params: ChannelParams,
        response: { 200: Ok },
      },
    },
    async (req: FastifyRequest<{ Params: { channel: string } }>) => {
      const name = req.params.channel;
      await channels.remove(acct(req), name);
      await hub.history.forget(acct(req), name);
      await hub.broadcast(acct(req), name, { t: 'x' });
      return { ok: true };
    }
  );

  app.post(
    '/v1/realtime/publish',
    {
      config: {
        scope: 'realtime',
        idempotent: true,
        operation: 'realtime.publish',
        errors: ['payload_too_large', 'rate_limited'],
        ...(perMessage > 0 ? { billing: { unit: 'message', price_usd: perMessage } } : {}),
      },
      schema: {
        summary: "Send an event to a channel's subscribers on every node",
        tags,
        body: PublishBody,
        response: { 200: PublishResult },
      },
    },
    async (req: FastifyRequest<{ Body: PublishBodyT }>, reply: FastifyReply) => {
      const b = req.body;
      const p = req.principal!;
      await admitMessage(d, p.accountId, p.tier, b.data);
      if (perMessage > 0 && (await svc.wallet.balance(p.accountId)) <= 0)
        throw apiError('insufficient_balance', 'The balance is spent: top up with POST /v1/account/topup to publish.');
      const env = Hub.message(b.event, b.data ?? null);
      const answer = await idempotentTransaction(svc, req, reply, async (trx) => {
        await hub.history.add(trx, p.accountId, b.channel, {
          message_id: env.id,
          event: env.e,
          data: env.d,
          created_at: env.at,
        });
        return { message_id: env.id };
      });
      // After the commit: a resuming client finds in the history every message it could have missed live.
      await hub.broadcast(p.accountId, b.channel, env);
      return answer;
    }
  );

  app.get(
    '/v1/realtime/channels/:channel/presence',
    {
      config: { scope: 'realtime', operation: 'realtime.presence' },
      schema: {
        summary: 'Members of a presence channel on every node',
        tags,
        params: ChannelParams,
        response: { 200: PresenceList },
      },
    },
    async (req: FastifyRequest<{ Params: { channel: string } }>) => {
      const members = await hub.presence.members(acct(req), req.params.channel);
      return {
        members: members.map((m) =>
          m.user_id ? { client_id: m.client_id, user_id: m.user_id } : { client_id: m.client_id }
        ),
      };
    }
  );

  app.post(
    '/v1/realtime/pusher',
    {
      config: { scope: 'realtime', operation: 'realtime.pusher' },
      schema: {
        summary: "This account's Pusher app (id, key, secret), made on the first call",
        tags,
        response: { 200: PusherApp },
      },
    },
    async (req: FastifyRequest) => {
      const a = await d.apps.ensure(acct(req));
      const url = new URL(svc.config.server.public_url);
      const tls = url.protocol === 'https:';
      return {
        app_id: a.appId,
        key: a.key,
        secret: a.secret,
        ws_host: url.hostname,
        ws_port: Number(url.port || (tls ? 443 : 80)),
        force_tls: tls,
        created_at: iso(a.createdAt),
      };
    }
  );
}
