import {
  type AreaPricedImpl,
  type VendorContext,
  VendorFailure,
  type RealtimeTokenInput,
  type RealtimeTokenOutput,
  vendorFetch,
  readJson,
  joinUrl,
} from '../../core/kit/vendor.js';
import { openAiHeaders } from './client.js';

// OpenAI Realtime (GA): POST /realtime/client_secrets creates the session configuration and an
// ephemeral client secret (`ek_…`) a browser uses to open the WebRTC session itself, so the
// account's API key never leaves the server. The key is the instance's, or the caller's own
// (BYOK) when the router hands it one (`credentials`). The area prices a token, not the adapter.

/** OpenAI caps `expires_after.seconds` at two hours. */
export const OPENAI_REALTIME_MAX_TTL_SECONDS = 7200;
export const OPENAI_REALTIME_DEFAULT_MODEL = 'gpt-realtime';

interface ClientSecret {
  value?: string;
  expires_at?: number;
  session?: { id?: string; model?: string };
}

export function openAiRealtimeCapability(
  cfg: { base_url: string; api_key: string; organization?: string },
  ctx: VendorContext
): AreaPricedImpl<RealtimeTokenInput, RealtimeTokenOutput> {
  const id = ctx.instanceId;
  return {
    async invoke(input, opts) {
      const model = input.model ?? OPENAI_REALTIME_DEFAULT_MODEL;
      const session: Record<string, unknown> = { type: 'realtime', model };
      if (input.voice) session.audio = { output: { voice: input.voice } };
      const res = await vendorFetch(
        ctx.fetch,
        joinUrl(cfg.base_url, '/realtime/client_secrets'),
        {
          method: 'POST',
          signal: opts.signal,
          headers: openAiHeaders(cfg, opts.credentials),
          body: JSON.stringify({
            expires_after: {
              anchor: 'created_at',
              seconds: Math.min(input.ttl_seconds, OPENAI_REALTIME_MAX_TTL_SECONDS),
            },
            session,
          }),
        },
        id
      );
      const j = await readJson<ClientSecret>(res, id);
      if (typeof j.value !== 'string' || typeof j.expires_at !== 'number')
        throw new VendorFailure('unavailable', `${id} answered without a client secret`);
      return {
        token: j.value,
        expires_at: j.expires_at * 1000,
        vendor_session_id: j.session?.id,
        model: j.session?.model ?? model,
      };
    },
  };
}
