import { pageQuery, seg, type Requester } from './call.js';
import { paginate } from './paginate.js';
import type {
  CaptchaChallenge,
  CaptchaSiteKey,
  CaptchaSiteKeyPage,
  CaptchaSiteKeyRequest,
  CaptchaSiteKeyUpdate,
  CaptchaVerifyRequest,
  CaptchaVerifyResult,
  CaptchaWidget,
  CaptchaWidgetRequest,
} from './captcha-types.js';
import type { ListQuery, OkResponse, RequestOptions } from './types.js';

/** `client.captcha.siteKeys`: the account's site keys (hostnames, difficulty, vendor keys; secrets go in only). */
export class CaptchaSiteKeysApi {
  constructor(private readonly call: Requester) {}

  create(body: CaptchaSiteKeyRequest = {}, opts: RequestOptions = {}): Promise<CaptchaSiteKey> {
    return this.call('POST', '/v1/captcha/site-keys', { ...opts, body });
  }

  list(query: ListQuery = {}, opts: RequestOptions = {}): Promise<CaptchaSiteKeyPage> {
    return this.call('GET', '/v1/captcha/site-keys', { ...opts, query: pageQuery(query) });
  }

  iterate(query: Omit<ListQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncIterableIterator<CaptchaSiteKey> {
    return paginate((cursor) => this.list({ ...query, cursor }, opts));
  }

  get(siteKeyId: string, opts: RequestOptions = {}): Promise<CaptchaSiteKey> {
    return this.call('GET', `/v1/captcha/site-keys/${seg(siteKeyId)}`, opts);
  }

  update(siteKeyId: string, body: CaptchaSiteKeyUpdate, opts: RequestOptions = {}): Promise<CaptchaSiteKey> {
    return this.call('PATCH', `/v1/captcha/site-keys/${seg(siteKeyId)}`, { ...opts, body });
  }

  delete(siteKeyId: string, opts: RequestOptions = {}): Promise<OkResponse> {
    return this.call('DELETE', `/v1/captcha/site-keys/${seg(siteKeyId)}`, opts);
  }
}

/** `client.captcha`: verify widget tokens, issue widgets (docs/captcha.md). */
export class CaptchaApi {
  readonly siteKeys: CaptchaSiteKeysApi;

  constructor(private readonly call: Requester) {
    this.siteKeys = new CaptchaSiteKeysApi(call);
  }

  /** Check a token from a form: `valid: false` with a `reason` for anything but a fresh human's. */
  verify(body: CaptchaVerifyRequest, opts: RequestOptions = {}): Promise<CaptchaVerifyResult> {
    return this.call('POST', '/v1/captcha/verify', { ...opts, body });
  }

  /** The element and script for a page (default: the gateway's own proof of work, the first site key). */
  widget(body: CaptchaWidgetRequest = {}, opts: RequestOptions = {}): Promise<CaptchaWidget> {
    return this.call('POST', '/v1/captcha/widgets', { ...opts, body });
  }

  /** A `service` challenge as the widget fetches it: public, sent without the key. */
  challenge(siteKeyId: string, opts: RequestOptions = {}): Promise<CaptchaChallenge> {
    return this.call('GET', `/v1/captcha/sites/${seg(siteKeyId)}/challenge`, { ...opts, auth: false });
  }
}
