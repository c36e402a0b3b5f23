import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { apiError, deriveKey, iso, newId, now as clockNow, type Svc } from '../../core/kit/area.js';
import type { SmsConfigT } from './config.js';

// One-time passcodes with Twilio Verify's limits: 6 digits, valid otp_ttl_seconds, locked
// after otp_max_checks wrong codes until it expires, one send per otp_resend_seconds a
// number, otp_max_sends sends without a successful check. One row per account and number,
// so another account's passcode to the same number is its own. Codes are kept as an HMAC
// under a key derived from the master key, and compared in constant time.

interface OtpRow {
  account_id: string;
  phone: string;
  request_id: string;
  code_hash: string;
  expires_at: number | string;
  checks: number;
  verified_at: number | string | null;
  last_sent_at: number | string;
  sends: number;
  window_started_at: number | string;
}

export interface IssuedOtp {
  request_id: string;
  code: string;
  expires_at: string;
}

export class OtpStore {
  private readonly key: Buffer;

  constructor(
    private readonly svc: Svc,
    private readonly cfg: SmsConfigT
  ) {
    this.key = deriveKey(svc.masterKey, 'sms-otp', 'passcode hmac');
  }

  private hash(requestId: string, code: string): string {
    return createHmac('sha256', this.key).update(`${requestId}:${code}`).digest('hex');
  }

  /** The row, locked for this transaction where the database can (PostgreSQL; SQLite writes one at a time). */
  private async locked(trx: Kysely<any>, accountId: string, phone: string): Promise<OtpRow | undefined> {
    let q = trx.selectFrom('sms_otp').selectAll().where('account_id', '=', accountId).where('phone', '=', phone);
    if (this.svc.dialect === 'postgres') q = q.forUpdate();
    return (await q.executeTakeFirst()) as OtpRow | undefined;
  }

  /**
   * A new passcode for `phone`, replacing any earlier one, or 429 rate_limited when the number
   * had one too recently or too many without a successful check. In the caller's transaction,
   * which also sends it: refused, nothing is written and nothing sent.
   */
  async issue(trx: Kysely<any>, accountId: string, phone: string): Promise<IssuedOtp> {
    const now = clockNow();
    // The first passcode to a number inserts its row; two at once meet on the primary key.
    await trx
      .insertInto('sms_otp')
      .values({
        account_id: accountId,
        phone,
        request_id: '',
        code_hash: '',
        expires_at: 0,
        checks: 0,
        verified_at: null,
        last_sent_at: 0,
        sends: 0,
        window_started_at: 0,
      })
      .onConflict((oc) => oc.columns(['account_id', 'phone']).doNothing())
      .execute();
    const row = (await this.locked(trx, accountId, phone))!;
    const lastSent = Number(row.last_sent_at);
    const resendAt = lastSent + this.cfg.otp_resend_seconds * 1000;
    if (now < resendAt)
      throw limited(
        resendAt - now,
        `A passcode was sent to this number less than ${this.cfg.otp_resend_seconds} s ago.`
      );
    const windowStart = Number(row.window_started_at);
    const windowOpen = now < windowStart + this.cfg.otp_ttl_seconds * 1000;
    const sends = windowOpen ? row.sends : 0;
    if (sends >= this.cfg.otp_max_sends)
      throw limited(
        windowStart + this.cfg.otp_ttl_seconds * 1000 - now,
        `${sends} passcodes were sent to this number without a successful check.`
      );
    const request_id = newId('otp');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const expires = now + this.cfg.otp_ttl_seconds * 1000;
    await trx
      .updateTable('sms_otp')
      .set({
        request_id,
        code_hash: this.hash(request_id, code),
        expires_at: expires,
        checks: 0,
        verified_at: null,
        last_sent_at: now,
        sends: sends + 1,
        window_started_at: windowOpen ? windowStart : now,
      })
      .where('account_id', '=', accountId)
      .where('phone', '=', phone)
      .execute();
    return { request_id, code, expires_at: iso(expires) };
  }

  /**
   * Whether `code` is the number's live passcode. A wrong code counts a check; past
   * otp_max_checks it is 429 otp_attempts_exceeded until the passcode expires. A right one is
   * used up (a second check of it is false) and clears the send limit.
   */
  async verify(accountId: string, phone: string, code: string): Promise<boolean> {
    return this.svc.db.transaction().execute(async (trx) => {
      const row = await this.locked(trx, accountId, phone);
      const now = clockNow();
      if (!row?.code_hash || row.verified_at !== null || now >= Number(row.expires_at)) return false;
      if (row.checks >= this.cfg.otp_max_checks) {
        const seconds = Math.max(1, Math.ceil((Number(row.expires_at) - now) / 1000));
        throw apiError(
          'otp_attempts_exceeded',
          `${row.checks} wrong codes for this passcode: it is locked until it expires in ${seconds} s.`,
          { param: 'code', headers: { 'retry-after': String(seconds) } }
        );
      }
      const want = Buffer.from(row.code_hash, 'hex');
      const got = Buffer.from(this.hash(row.request_id, code), 'hex');
      const valid = want.length === got.length && timingSafeEqual(want, got);
      await trx
        .updateTable('sms_otp')
        .set(
          valid
            ? { checks: row.checks + 1, verified_at: now, sends: 0, window_started_at: 0 }
            : { checks: row.checks + 1 }
        )
        .where('account_id', '=', accountId)
        .where('phone', '=', phone)
        .execute();
      return valid;
    });
  }

  /** Rows whose passcode expired before `before`: nothing in them limits a send any more. */
  async sweep(before: number, limit: number): Promise<number> {
    const old = this.svc.db
      .selectFrom('sms_otp')
      .select('request_id')
      .where('expires_at', '<', before)
      .where('last_sent_at', '<', before)
      .limit(limit);
    const r = await this.svc.db.deleteFrom('sms_otp').where('request_id', 'in', old).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

function limited(waitMs: number, why: string) {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return apiError('rate_limited', `${why} Retry in ${seconds} s.`, {
    param: 'to',
    headers: { 'retry-after': String(seconds) },
  });
}
