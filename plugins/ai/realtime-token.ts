import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  type Svc,
  newId,
  type Planned,
  type RealtimeTokenInput,
  type RealtimeTokenOutput,
} from '../../core/kit/area.js';

export const REALTIME_CAPABILITY = 'ai.realtime.token';

export const IceServer = Type.Object(
  {
    urls: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })]),
    username: Type.Optional(Type.String()),
    credential: Type.Optional(Type.String()),
  },
  { additionalProperties: false }
);

/** `plugins.ai.realtime`: what a live session token costs and which ICE servers clients get. */
export const RealtimeConfig = Type.Object(
  {
    price_usd: Type.Number({
      minimum: 0,
      default: 0.1,
      description:
        "Flat charge per session token: the minutes themselves are billed by the vendor to the operator's key, out of the gateway's sight.",
    }),
    ice_servers: Type.Array(IceServer, {
      default: [{ urls: 'stun:stun.l.google.com:19302' }],
      description: 'Handed to the client with every token (WebRTC RTCIceServer list).',
    }),
    default_model: Type.Optional(
      Type.String({ minLength: 1, description: "Model when the caller names none (else the vendor's default)." })
    ),
  },
  { additionalProperties: false, default: {} }
);
export type RealtimeConfigT = Static<typeof RealtimeConfig>;

const RealtimeTokenBody = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    voice: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    ttl_seconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: 86_400,
        default: 3600,
        description: '60 s to 24 h; the vendor may cap it lower (OpenAI: 2 h), and `expires_at` says the real end.',
      })
    ),
  },
  { additionalProperties: false }
);
type RealtimeTokenBodyT = Static<typeof RealtimeTokenBody>;

const LiveSessionToken = Type.Object({
  session_id: Type.String(),
  ice_servers: Type.Array(IceServer),
  token: Type.String({
    description: "The vendor's ephemeral client secret; the client opens the WebRTC session with it.",
  }),
  expires_at: Type.String(),
  model: Type.String(),
  vendor: Type.String(),
  byok: Type.Boolean({ description: "Minted with the caller's own key (BYOK): charged only the platform fee." }),
});

/** POST /v1/ai/realtime/token: a short-lived vendor client secret for a browser's live (WebRTC) session. */
export function registerRealtimeToken(app: FastifyInstance, svc: Svc, cfg: RealtimeConfigT): void {
  app.post(
    '/v1/ai/realtime/token',
    {
      config: {
        scope: 'ai',
        operation: REALTIME_CAPABILITY,
        capability: REALTIME_CAPABILITY,
        billing: { unit: 'token', price_usd: cfg.price_usd },
      },
      schema: {
        summary: 'A short-lived token for a live voice session (WebRTC) with a realtime model',
        tags: ['ai'],
        body: RealtimeTokenBody,
        response: { 200: LiveSessionToken },
      },
    },
    async (req: FastifyRequest<{ Body: RealtimeTokenBodyT }>) => {
      const b = req.body;
      // The caller's own key goes first (charged the platform fee); a revoked or invalid one is not among them.
      const { accountId, region } = req.principal!;
      const route = await svc.router.plan<unknown, Planned>(REALTIME_CAPABILITY, {
        accountId,
        region,
        request: undefined,
      });
      const input: RealtimeTokenInput = {
        model: b.model ?? cfg.default_model,
        voice: b.voice,
        ttl_seconds: b.ttl_seconds ?? 3600,
      };
      const r = await svc.router.call<RealtimeTokenInput, RealtimeTokenOutput>(REALTIME_CAPABILITY, input, {
        accountId,
        meter: req.meter,
        ref: req.id,
        route,
      });
      return {
        session_id: r.output.vendor_session_id ?? newId('sess'),
        ice_servers: cfg.ice_servers,
        token: r.output.token,
        expires_at: new Date(r.output.expires_at).toISOString(),
        model: r.output.model,
        vendor: r.vendor,
        byok: !!route.find((c) => c.id === r.vendor)?.byok,
      };
    }
  );
}
