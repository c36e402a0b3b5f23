import { Type } from '@sinclair/typebox';
import {
  defineVendor,
  egressAgents,
  egressGet,
  secret,
  VendorFailure,
  type EmailEventUpdate,
  type EmailSendInput,
  type EmailSendOutput,
  type EmailWebhookInput,
} from '../../core/kit/vendor.js';
import { sesUpdate } from './events.js';
import { SES_USD_PER_ATTACHMENT_GB, SES_USD_PER_EMAIL, sesPrice } from './prices.js';
import { sendEmailInput, sesFailure } from './send.js';
import { parseSns, SnsVerifier } from './sns.js';

const FETCH_MS = 10_000;
const CONFIRMED = 64;

/**
 * Amazon SES (API v2) through the AWS SDK: SendEmail with the raw MIME message nodemailer
 * renders, every connection through the gateway's egress proxy. Bounces, complaints and
 * deliveries come back through an SNS topic subscribed over HTTPS to
 * POST /v1/email/webhooks/{instance} (`email.events`), each message's SNS signature verified
 * with the certificate from SNS's own host; the subscription is confirmed the same way.
 * SES takes no idempotency key, so a send whose outcome a crash lost is never resent.
 */
export default defineVendor({
  name: 'ses',
  regions: ['global'],
  configSchema: Type.Object(
    {
      region: Type.String({ pattern: '^[a-z]{2}(-[a-z]+)+-\\d$', description: 'The SES region, e.g. eu-west-1.' }),
      access_key_id: Type.String({ minLength: 1, description: 'An IAM key allowed ses:SendEmail.' }),
      secret_access_key: secret(Type.String({ minLength: 1 })),
      endpoint: Type.String({ default: '', description: 'Service URL; empty: SES of the region.' }),
      configuration_set: Type.String({
        default: '',
        description: 'Configuration set every message is sent with (its event destinations, its IP pool).',
      }),
      sns_topic_arns: Type.Array(Type.String({ pattern: '^arn:aws[a-z-]*:sns:' }), {
        default: [],
        description: 'SNS topics whose notifications this instance takes; any other topic is refused.',
      }),
      sns_cert_host: Type.String({
        default: '',
        description:
          'Host (and :port when not 443) that SigningCertURL and SubscribeURL must be on; empty: '
          + 'sns.<region>.amazonaws.com. Only tests change it (the fake SNS).',
      }),
      ca: Type.String({
        default: '',
        description: "PEM of a CA to trust besides the system ones (a private endpoint; the tests' fake).",
      }),
      price_usd_per_email: Type.Number({ minimum: 0, default: SES_USD_PER_EMAIL }),
      price_usd_per_attachment_gb: Type.Number({ minimum: 0, default: SES_USD_PER_ATTACHMENT_GB }),
    },
    { additionalProperties: false }
  ),
  async create(config, ctx) {
    // The SDK is loaded when an ses instance is configured, not by every gateway.
    const { SESv2Client, SendEmailCommand, GetAccountCommand } = await import('@aws-sdk/client-sesv2');
    const agents = egressAgents(ctx.egressProxy, config.ca);
    const client = new SESv2Client({
      region: config.region,
      endpoint: config.endpoint || undefined,
      credentials: { accessKeyId: config.access_key_id, secretAccessKey: config.secret_access_key },
      maxAttempts: 1, // the router and the outbox are the only retry loops
      requestHandler: agents,
    });
    const suffix = config.region.startsWith('cn-') ? '.amazonaws.com.cn' : '.amazonaws.com';
    const fetchText = async (url: URL): Promise<string> => {
      let r: { status: number; body: string };
      try {
        r = await egressGet(agents, url, { signal: AbortSignal.timeout(FETCH_MS), maxBytes: 64 * 1024 });
      } catch (e) {
        throw new VendorFailure('unavailable', `ses (sns): GET ${url.href}: ${(e as Error).message}`, { cause: e });
      }
      if (r.status !== 200) throw new VendorFailure('auth', `ses (sns): GET ${url.href} answered ${r.status}`);
      return r.body;
    };
    const sns = new SnsVerifier({
      certHost: (config.sns_cert_host || `sns.${config.region}${suffix}`).toLowerCase(),
      topics: config.sns_topic_arns,
      get: fetchText,
    });
    // Subscriptions confirmed by this process: SNS re-posting a confirmation is not a second GET.
    const confirmed = new Set<string>();
    return {
      capabilities: {
        'email.send': {
          async invoke(input: EmailSendInput, { signal }): Promise<EmailSendOutput> {
            const command = new SendEmailCommand(await sendEmailInput(input, config.configuration_set));
            let out: { MessageId?: string };
            try {
              out = await client.send(command, { abortSignal: signal });
            } catch (e) {
              if (signal.aborted) throw signal.reason ?? e;
              throw sesFailure(e);
            }
            if (!out.MessageId) throw new VendorFailure('unavailable', 'ses accepted the message without a MessageId');
            const all = [...input.to, ...input.cc, ...input.bcc].map((a) => a.address);
            return { vendor_message_id: out.MessageId, accepted: all, rejected: [] };
          },
          price: (input: EmailSendInput) =>
            sesPrice(input, config.price_usd_per_email, config.price_usd_per_attachment_gb),
        },
        'email.events': {
          async invoke(input: EmailWebhookInput): Promise<EmailEventUpdate[]> {
            const m = parseSns(input.body);
            await sns.verify(m);
            if (m.Type === 'SubscriptionConfirmation') {
              const url = sns.snsUrl(m.SubscribeURL ?? '', 'SubscribeURL');
              if (!confirmed.has(url.href)) {
                await fetchText(url);
                if (confirmed.size >= CONFIRMED) confirmed.clear();
                confirmed.add(url.href);
                ctx.log.info({ topic: m.TopicArn }, 'ses: SNS subscription confirmed');
              }
              return [];
            }
            if (m.Type !== 'Notification') return [];
            const u = sesUpdate(m.Message);
            return u ? [u] : [];
          },
          price: () => 0,
        },
      },
      // GetAccount reads the account's sending status: free, signed, sends nothing.
      async health({ signal }) {
        try {
          await client.send(new GetAccountCommand({}), { abortSignal: signal });
          return { ok: true };
        } catch (e) {
          return { ok: false, error: (e as Error).message };
        }
      },
      close() {
        client.destroy();
        agents.httpAgent.destroy();
        agents.httpsAgent.destroy();
      },
    };
  },
});
