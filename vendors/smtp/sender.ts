import {
  EmailMimeBuilder,
  mailOptions,
  type EmailSendInput,
  type EmailSendOutput,
  type VendorContext,
} from '../../core/kit/vendor.js';

type Nodemailer = typeof import('nodemailer');
type Transporter = ReturnType<Nodemailer['createTransport']>;

export interface SmtpConfig {
  url: string;
  pool: boolean;
  max_connections: number;
  max_messages: number;
  require_tls: boolean;
  ca: string;
  timeout_seconds: number;
  build_threads: number;
  dkim?: { domain: string; selector: string; private_key: string };
}

/** The server's own queue id from its final answer ("250 2.0.0 Ok: queued as 4F2B1"), when it names one. */
export function queueId(response: string | undefined): string | undefined {
  return response?.match(/queued as ([A-Za-z0-9._@<>-]+)/i)?.[1];
}

/**
 * One configured SMTP server: the transport is made on the first message (nodemailer loads then).
 * Each message is built and signed in a worker thread first; the transport only writes its bytes.
 */
export class SmtpSender {
  private transport?: Promise<Transporter>;
  private readonly builder: EmailMimeBuilder;

  constructor(
    private readonly config: SmtpConfig,
    private readonly ctx: VendorContext
  ) {
    this.builder = new EmailMimeBuilder({
      name: ctx.instanceId,
      threads: config.build_threads,
      perAccount: config.build_threads,
      maxQueuedPerAccount: 100,
      maxMemoryMb: 512,
    });
  }

  private open(): Promise<Transporter> {
    this.transport ??= (async () => {
      const nodemailer = ((await import('nodemailer')) as any).default as Nodemailer;
      const c = this.config;
      const ms = Math.round(c.timeout_seconds * 1000);
      const options: Record<string, unknown> = {
        url: c.url,
        pool: c.pool,
        maxConnections: c.max_connections,
        maxMessages: c.max_messages,
        requireTLS: c.require_tls,
        connectionTimeout: ms,
        greetingTimeout: ms,
        socketTimeout: ms,
        // Every connection is a CONNECT through the egress proxy: the name is resolved and checked
        // there and the tunnel goes to the checked address; TLS keeps the name as servername.
        proxy: await this.ctx.egressProxy(),
        ...(c.ca ? { tls: { ca: c.ca } } : {}),
      };
      return nodemailer.createTransport(options as any);
    })();
    this.transport.catch(() => (this.transport = undefined));
    return this.transport;
  }

  async send(input: EmailSendInput, opts: { signal: AbortSignal; accountId?: string }): Promise<EmailSendOutput> {
    const transport = await this.open();
    const mail = mailOptions(input);
    const own = this.config.dkim;
    const dkim =
      mail.dkim ?? (own && { domainName: own.domain, keySelector: own.selector, privateKey: own.private_key });
    const { raw, envelope } = await this.builder.build({ ...mail, ...(dkim ? { dkim } : {}) }, opts);
    const info = await transport.sendMail({ envelope, raw, signal: opts.signal } as any);
    const list = (l: unknown) => ((l as unknown[]) ?? []).map((a) => (typeof a === 'string' ? a : (a as any).address));
    return {
      vendor_message_id: queueId(info.response) ?? input.message_id,
      accepted: list(info.accepted),
      rejected: list(info.rejected),
    };
  }

  async verify(): Promise<{ ok: boolean; error?: string }> {
    try {
      await (await this.open()).verify();
      return { ok: true };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  }

  async close(): Promise<void> {
    await this.builder.close();
    const t = await this.transport?.catch(() => undefined);
    t?.close();
  }
}
