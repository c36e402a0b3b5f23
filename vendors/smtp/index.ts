import { Type } from '@sinclair/typebox';
import { defineVendor, secret, type EmailSendInput } from '../../core/kit/vendor.js';
import { classifySmtp } from './classify.js';
import { SmtpSender } from './sender.js';
import { smtpPrice } from './prices.js';

/**
 * Any SMTP server (a relay, Postfix, a provider's SMTP endpoint) through nodemailer's pooled
 * transport, with DKIM signing: the sending domain's key when the area passes one (a verified
 * domain), else the key configured here. Messages are built and signed in worker threads, and
 * the transport sends their bytes. Every connection goes through the gateway's egress
 * proxy, which resolves and checks the server's name and connects to the checked address; TLS
 * then runs end to end with the server's name as servername.
 */
export default defineVendor({
  name: 'smtp',
  regions: ['global'],
  configSchema: Type.Object(
    {
      url: secret(
        Type.String({
          pattern: '^smtps?://',
          description:
            'smtp://[user:pass@]host[:port] (STARTTLS when offered) or smtps://… (TLS from the start, port 465).',
        })
      ),
      pool: Type.Boolean({ default: true, description: 'Keep connections open and reuse them.' }),
      max_connections: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
      max_messages: Type.Integer({
        minimum: 1,
        maximum: 100_000,
        default: 100,
        description: 'Messages one pooled connection sends before it is replaced.',
      }),
      require_tls: Type.Boolean({
        default: false,
        description: 'On smtp://, refuse a server that offers no STARTTLS.',
      }),
      ca: Type.String({ default: '', description: 'PEM of a CA to trust besides the system ones (a private relay).' }),
      timeout_seconds: Type.Number({ minimum: 1, maximum: 600, default: 60 }),
      build_threads: Type.Integer({
        minimum: 1,
        maximum: 64,
        default: 2,
        description: 'Worker threads building and DKIM-signing messages; the rest wait their turn, fair per account.',
      }),
      price_usd_per_message: Type.Number({
        minimum: 0,
        default: 0,
        description: 'What one message costs the operator at this server (before wallet.markup).',
      }),
      dkim: Type.Optional(
        Type.Object(
          {
            domain: Type.String({ minLength: 1 }),
            selector: Type.String({ minLength: 1 }),
            private_key: secret(Type.String({ minLength: 1, description: 'PEM RSA private key.' })),
          },
          { additionalProperties: false, description: "Signs messages whose domain has no key of the area's own." }
        )
      ),
    },
    { additionalProperties: false }
  ),
  create(config, ctx) {
    const sender = new SmtpSender(config, ctx);
    return {
      capabilities: {
        'email.send': {
          invoke: (input: EmailSendInput, opts) => sender.send(input, opts),
          price: () => smtpPrice(config.price_usd_per_message),
        },
      },
      classify: classifySmtp,
      health: () => sender.verify(),
      close: () => sender.close(),
    };
  },
});
