import { Type, type Static } from '@sinclair/typebox';

/** `plugins.email` in the config file. */
export const EmailConfig = Type.Object(
  {
    default_from: Type.String({
      default: 'noreply@gateway.localhost',
      description: 'Sender of a message that names no `from`. Its domain needs no verification: the operator chose it.',
    }),
    dns_servers: Type.Array(Type.String(), {
      default: [],
      description:
        'DNS servers (`ip` or `ip:port`) that domain verification asks for the DKIM, SPF and DMARC records; '
        + 'empty: the system resolvers.',
    }),
    dkim_key_bits: Type.Integer({
      minimum: 1024,
      maximum: 4096,
      default: 2048,
      description: 'Size of the RSA key generated for each domain.',
    }),
    spf_include: Type.String({
      default: '',
      description:
        'SPF mechanism the required TXT record names for your relay (`include:_spf.relay.example`); '
        + 'empty: `a mx`.',
    }),
    dmarc_policy: Type.String({
      default: 'v=DMARC1; p=none',
      description: 'The DMARC TXT record returned as required; verification checks that one exists.',
    }),
    max_recipients: Type.Integer({ minimum: 1, maximum: 1000, default: 50, description: 'to + cc + bcc.' }),
    max_attachments: Type.Integer({ minimum: 0, maximum: 100, default: 10 }),
    max_attachment_bytes: Type.Integer({
      minimum: 0,
      maximum: 20 * 1024 * 1024,
      default: 10 * 1024 * 1024,
      description: 'Decoded size of all attachments of a message together.',
    }),
    max_template_bytes: Type.Integer({ minimum: 1024, maximum: 1024 * 1024, default: 256 * 1024 }),
    template_render_seconds: Type.Number({
      minimum: 0.1,
      maximum: 60,
      default: 5,
      description: 'Longest filling a template may take (in a worker thread, then stopped: 422).',
    }),
    max_send_attempts: Type.Integer({
      minimum: 1,
      maximum: 50,
      default: 8,
      description: 'Attempts of a send that no vendor took (not_sent failures) before it is `failed`.',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type EmailConfigT = Static<typeof EmailConfig>;
