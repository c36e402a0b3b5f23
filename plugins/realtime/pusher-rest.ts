import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { apiError, fieldError } from '../../core/kit/area.js';
import { isChannelName } from './channel-names.js';
import { Hub } from './hub.js';
import { pusherSign } from './pusher-socket.js';
import { admitMessage, type RealtimeDeps } from './routes.js';
import type { PusherAppRow } from './pusher-apps.js';

/** How far auth_timestamp may be from the gateway's clock, as Pusher allows. */
const SKEW_SECONDS = 600;

interface PusherEvent {
  name: string;
  data: unknown;
  channels: string[];
  socket_id?: string;
}

/**
 * Pusher's signed REST publish at the host root, where the `pusher` server SDK sends it:
 * `POST /apps/{app_id}/events` and `/batch_events`. The signature covers the method, the path
 * and the sorted query (auth_key, auth_timestamp, auth_version, body_md5), so the raw body is read.
 */
export function registerPusherRest(app: FastifyInstance, d: RealtimeDeps): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    const params = Type.Object({ app_id: Type.String({ minLength: 1, maxLength: 32 }) });
    const options = (operation: string, summary: string) => ({
      config: {
        auth: 'none' as const,
        operation,
        errors: ['unauthenticated' as const, 'payload_too_large' as const, 'rate_limited' as const],
      },
      schema: { summary, tags: ['realtime'], params, response: { 200: Type.Object({}) } },
    });
    scope.post(
      '/apps/:app_id/events',
      options(
        'realtime.pusher.events',
        'Pusher REST: trigger an event on up to 100 channels (signed with the app secret)'
      ),
      async (req: FastifyRequest<{ Params: { app_id: string } }>) => {
        const { app: pa, body } = await verified(d, req);
        await publish(d, pa, readEvent(body, ''));
        return {};
      }
    );
    scope.post(
      '/apps/:app_id/batch_events',
      options('realtime.pusher.batch', 'Pusher REST: trigger up to 10 events (signed with the app secret)'),
      async (req: FastifyRequest<{ Params: { app_id: string } }>) => {
        const { app: pa, body } = await verified(d, req);
        const batch = (body as { batch?: unknown }).batch;
        if (!Array.isArray(batch) || batch.length < 1 || batch.length > 10)
          throw fieldError('batch', 'is a list of 1 to 10 events');
        const events = batch.map((e, i) => readEvent(e, `batch[${i}].`));
        for (const e of events) await publish(d, pa, e);
        return {};
      }
    );
  });
}

async function verified(d: RealtimeDeps, req: FastifyRequest<{ Params: { app_id: string } }>) {
  const pa = await d.apps.byId(req.params.app_id);
  if (!pa?.active) throw apiError('not_found', `No Pusher app ${req.params.app_id} on this gateway.`);
  const raw = typeof req.body === 'string' ? req.body : '';
  const query = (req.url.split('?')[1] ?? '').split('&').filter(Boolean);
  const pairs = new Map(query.map((p) => [p.slice(0, p.indexOf('=') < 0 ? p.length : p.indexOf('=')), p]));
  const value = (k: string) => {
    const p = pairs.get(k);
    return p === undefined ? undefined : decodeURIComponent(p.slice(k.length + 1));
  };
  if (value('auth_key') !== pa.key) throw apiError('unauthenticated', 'auth_key is not this app’s key.');
  const ts = Number(value('auth_timestamp'));
  if (!Number.isFinite(ts) || Math.abs(Date.now() / 1000 - ts) > SKEW_SECONDS)
    throw apiError('unauthenticated', `auth_timestamp is more than ${SKEW_SECONDS} s from the gateway's clock.`);
  if (value('body_md5') !== createHash('md5').update(raw).digest('hex'))
    throw apiError('unauthenticated', 'body_md5 does not match the body.');
  const signed = [...pairs.entries()]
    .filter(([k]) => k !== 'auth_signature')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, p]) => p)
    .join('&');
  const path = req.url.split('?')[0];
  const want = pusherSign(pa.secret, `POST\n${path}\n${signed}`);
  const got = value('auth_signature') ?? '';
  if (got.length !== want.length || !safeEqual(got, want))
    throw apiError('unauthenticated', 'auth_signature is not valid.');
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw apiError('invalid_request', 'The body is not JSON.');
  }
  if (!body || typeof body !== 'object') throw apiError('invalid_request', 'The body is a JSON object.');
  return { app: pa, body };
}

function safeEqual(a: string, b: string): boolean {
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function readEvent(input: unknown, at: string): PusherEvent {
  const e = (input ?? {}) as Record<string, unknown>;
  if (typeof e.name !== 'string' || !e.name || e.name.length > 200) throw fieldError(`${at}name`, 'is an event name');
  const channels = e.channels ?? (e.channel === undefined ? undefined : [e.channel]);
  if (!Array.isArray(channels) || channels.length < 1 || channels.length > 100 || !channels.every(isChannelName))
    throw fieldError(`${at}channels`, 'is a list of 1 to 100 channel names');
  if (typeof e.data !== 'string') throw fieldError(`${at}data`, 'is a string');
  return {
    name: e.name,
    data: e.data,
    channels,
    socket_id: typeof e.socket_id === 'string' ? e.socket_id : undefined,
  };
}

/** Pusher data is a string; JSON objects and lists are kept as values, so native clients get them parsed. */
function dataValue(s: string): unknown {
  if (!/^\s*[[{]/.test(s)) return s;
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

async function publish(d: RealtimeDeps, pa: PusherAppRow, e: PusherEvent): Promise<void> {
  const data = dataValue(e.data as string);
  for (let i = 0; i < e.channels.length; i++) await admitMessage(d, pa.accountId, pa.tier, data);
  for (const channel of e.channels) await d.hub.send(pa.accountId, channel, Hub.message(e.name, data, e.socket_id));
}
