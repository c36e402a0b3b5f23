import { domainToASCII } from 'node:url';
import type { Readable } from 'node:stream';
import {
  kindFromStatus,
  mailOptions,
  VendorFailure,
  type EmailSendInput,
  type FailureKind,
} from '../../core/kit/vendor.js';

type Composer = new (mail: object) => { compile(): { createReadStream(): Readable } };
type Signer = new (opts: object) => { sign(input: Readable): Readable };

let nodemailer: Promise<{ MailComposer: Composer; DKIM: Signer }> | undefined;

/**
 * The RFC 5322 message SES sends as it is (Content.Raw): nodemailer's MailComposer over the
 * contract's mailOptions, so it is byte for byte what the SMTP and capture vendors render; Bcc
 * stays out of the headers (the Destination carries it), and a verified domain's key signs it
 * (SES adds its own Easy DKIM signature beside it when the identity has one).
 */
export async function rawMessage(input: EmailSendInput): Promise<Uint8Array> {
  nodemailer ??= Promise.all([import('nodemailer/lib/mail-composer'), import('nodemailer/lib/dkim')]).then(
    ([c, d]) => ({ MailComposer: ((c as any).default ?? c) as Composer, DKIM: ((d as any).default ?? d) as Signer })
  );
  const { MailComposer, DKIM } = await nodemailer;
  const mail = mailOptions(input);
  const composed = new MailComposer(mail).compile().createReadStream();
  const signed = mail.dkim ? new DKIM(mail.dkim).sign(composed) : composed;
  return Buffer.concat(await signed.toArray());
}

/** An address as SES's Destination takes it: ASCII, its domain in punycode. */
function ascii(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}@${domainToASCII(address.slice(at + 1)) || address.slice(at + 1)}`;
}

/** SendEmail's input: the raw message, its envelope, the configuration set, the record's id as a tag. */
export async function sendEmailInput(input: EmailSendInput, configurationSet: string) {
  const list = (l: EmailSendInput['to']) => l.map((a) => ascii(a.address));
  return {
    FromEmailAddress: ascii(input.from.address),
    Destination: { ToAddresses: list(input.to), CcAddresses: list(input.cc), BccAddresses: list(input.bcc) },
    Content: { Raw: { Data: await rawMessage(input) } },
    ...(configurationSet ? { ConfigurationSetName: configurationSet } : {}),
    // Published with every event of the message (mail.tags.svc_id): the record it belongs to.
    EmailTags: [{ Name: 'svc_id', Value: input.idempotency_key }],
  };
}

const KINDS: Record<string, FailureKind> = {
  TooManyRequestsException: 'rate_limited',
  ThrottlingException: 'rate_limited',
  // The account's sending quota or rate: the message was refused unread.
  LimitExceededException: 'rate_limited',
  AccountSuspendedException: 'quota',
  SendingPausedException: 'quota',
  UnrecognizedClientException: 'auth',
  InvalidSignatureException: 'auth',
  SignatureDoesNotMatch: 'auth',
  IncompleteSignature: 'auth',
  InvalidClientTokenId: 'auth',
  AccessDeniedException: 'auth',
  ExpiredTokenException: 'auth',
  MessageRejected: 'client_error',
  MailFromDomainNotVerifiedException: 'client_error',
  BadRequestException: 'client_error',
  NotFoundException: 'client_error',
};

interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

/**
 * An SDK failure as the router's kind: SES's error name first, else its HTTP status; a
 * connection the egress proxy refused never left. Anything else (a socket error, a timeout) is
 * returned as it is for the router's own classification.
 */
export function sesFailure(err: unknown): unknown {
  const e = (err ?? {}) as SdkError;
  if (err instanceof VendorFailure) return err;
  if (e.code === 'EPROXY') return new VendorFailure('not_sent', `ses: ${e.message}`, { cause: err });
  const status = e.$metadata?.httpStatusCode;
  const kind =
    (e.name && Object.hasOwn(KINDS, e.name) ? KINDS[e.name] : undefined)
    ?? (typeof status === 'number' && status >= 400 ? kindFromStatus(status) : undefined);
  if (!kind) return err;
  return new VendorFailure(kind, `ses answered ${status ?? '?'} ${e.name}: ${e.message ?? ''}`.trim(), {
    ...(typeof status === 'number' ? { status } : {}),
    cause: err,
  });
}
