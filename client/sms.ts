import { seg, type Requester } from './call.js';
import { paginate } from './paginate.js';
import type {
  CapturedSms,
  OtpRequest,
  OtpResponse,
  SendSmsRequest,
  SmsListQuery,
  SmsPage,
  SmsRecord,
  VerifyOtpRequest,
  VerifyOtpResponse,
} from './sms-types.js';
import type { RequestOptions } from './types.js';

/** `client.sms`: text messages and one-time passcodes (docs/sms.md). */
export class SmsApi {
  constructor(private readonly call: Requester) {}

  /**
   * Accept a message into the outbox: answered `queued`, sent by a job (`get` shows the state).
   * Pass an `idempotencyKey` to retry a send safely: the same key sends the message once.
   */
  send(body: SendSmsRequest, opts: RequestOptions = {}): Promise<SmsRecord> {
    return this.call('POST', '/v1/sms/send', { ...opts, body });
  }

  get(smsId: string, opts: RequestOptions = {}): Promise<SmsRecord> {
    return this.call('GET', `/v1/sms/${seg(smsId)}`, opts);
  }

  /** One page of the account's messages, newest first; `next_cursor` fetches the next. */
  list(query: SmsListQuery = {}, opts: RequestOptions = {}): Promise<SmsPage> {
    const { state, limit, cursor } = query;
    return this.call('GET', '/v1/sms', { ...opts, query: { state, limit, cursor } });
  }

  iterate(query: Omit<SmsListQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncIterableIterator<SmsRecord> {
    return paginate((cursor) => this.list({ ...query, cursor }, opts));
  }

  /** The message as the sms-capture vendor kept it (a gateway without an SMS provider). */
  captured(smsId: string, opts: RequestOptions = {}): Promise<CapturedSms> {
    return this.call('GET', `/v1/sms/${seg(smsId)}/captured`, opts);
  }

  /** Send a 6-digit passcode; `sms_id` in the answer is the message that carries it. */
  otp(body: OtpRequest, opts: RequestOptions = {}): Promise<OtpResponse> {
    return this.call('POST', '/v1/sms/otp', { ...opts, body });
  }

  /** Check a passcode: `{ valid: true }` once for the right code, `false` for anything else. */
  verify(body: VerifyOtpRequest, opts: RequestOptions = {}): Promise<VerifyOtpResponse> {
    return this.call('POST', '/v1/sms/verify', { ...opts, body });
  }
}
