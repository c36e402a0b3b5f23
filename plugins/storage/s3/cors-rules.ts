import { wildcardPattern } from '../../../core/kit/area.js';
import { S3Error, S3_NS, XML_HEAD, xmlEscape } from './errors.js';

/** One CORSRule of a bucket's CORS configuration, as S3 defines it. */
export interface CorsRule {
  id?: string;
  allowedOrigins: string[];
  allowedMethods: string[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

export const CORS_METHODS = ['GET', 'PUT', 'HEAD', 'POST', 'DELETE'];
// S3's limits: 100 rules, a 64 KB document.
const MAX_RULES = 100;
export const MAX_CORS_XML = 64 * 1024;

const malformed = () =>
  new S3Error(
    'MalformedXML',
    'The XML you provided was not well-formed or did not validate against our published schema.'
  );

/** Text of repeated elements: none, one (an object from the parser) or several. */
function texts(v: unknown): string[] {
  const list = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return list.map((x) => {
    if (typeof x !== 'string') throw malformed();
    return x.trim();
  });
}

function oneWildcard(kind: string, value: string): void {
  if (value.indexOf('*') !== value.lastIndexOf('*')) {
    throw new S3Error('InvalidRequest', `${kind} "${value}" can not have more than one wildcard.`);
  }
}

/** The rules of a parsed `<CORSConfiguration>`, checked as PutBucketCors checks them. */
export function corsRulesFromXml(doc: Record<string, any>): CorsRule[] {
  const root = doc.CORSConfiguration;
  if (!root || typeof root !== 'object') throw malformed();
  const raw = root.CORSRule === undefined ? [] : Array.isArray(root.CORSRule) ? root.CORSRule : [root.CORSRule];
  if (!raw.length || raw.length > MAX_RULES) throw malformed();
  return raw.map((r: unknown) => {
    if (!r || typeof r !== 'object') throw malformed();
    const x = r as Record<string, unknown>;
    const rule: CorsRule = {
      allowedOrigins: texts(x.AllowedOrigin),
      allowedMethods: texts(x.AllowedMethod),
      allowedHeaders: texts(x.AllowedHeader),
      exposeHeaders: texts(x.ExposeHeader),
    };
    if (!rule.allowedOrigins.length || !rule.allowedMethods.length) throw malformed();
    for (const m of rule.allowedMethods) {
      if (!CORS_METHODS.includes(m)) {
        throw new S3Error('InvalidRequest', `Found unsupported HTTP method in CORS config. Unsupported method is ${m}`);
      }
    }
    for (const o of rule.allowedOrigins) oneWildcard('AllowedOrigin', o);
    for (const h of rule.allowedHeaders) oneWildcard('AllowedHeader', h);
    for (const h of rule.exposeHeaders) {
      if (h.includes('*')) {
        throw new S3Error(
          'InvalidRequest',
          `ExposeHeader "${h}" contains wildcard. We currently do not support wildcard for ExposeHeader.`
        );
      }
    }
    const [id] = texts(x.ID);
    if (id !== undefined) {
      if (id.length > 255) throw new S3Error('InvalidArgument', 'The ID of a CORS rule is at most 255 characters.');
      rule.id = id;
    }
    const [age] = texts(x.MaxAgeSeconds);
    if (age !== undefined) {
      if (!/^\d{1,9}$/.test(age)) throw malformed();
      rule.maxAgeSeconds = Number(age);
    }
    return rule;
  });
}

export function corsRulesToXml(rules: CorsRule[]): string {
  const el = (name: string, values: string[]) => values.map((v) => `<${name}>${xmlEscape(v)}</${name}>`).join('');
  const body = rules
    .map(
      (r) =>
        '<CORSRule>'
        + (r.id === undefined ? '' : el('ID', [r.id]))
        + el('AllowedHeader', r.allowedHeaders)
        + el('AllowedMethod', r.allowedMethods)
        + el('AllowedOrigin', r.allowedOrigins)
        + el('ExposeHeader', r.exposeHeaders)
        + (r.maxAgeSeconds === undefined ? '' : el('MaxAgeSeconds', [String(r.maxAgeSeconds)]))
        + '</CORSRule>'
    )
    .join('');
  return `${XML_HEAD}<CORSConfiguration xmlns="${S3_NS}">${body}</CORSConfiguration>`;
}

export interface CorsAsk {
  origin: string;
  method: string;
  /** Lower-case names from access-control-request-headers (preflights only). */
  headers: string[];
}

/**
 * The first rule that allows the request, S3's way: the origin matches an AllowedOrigin, the
 * method is an AllowedMethod, and every header a preflight asks for matches an AllowedHeader
 * (without regard to case). Actual requests ask for no headers.
 */
export function matchCorsRule(rules: readonly CorsRule[], ask: CorsAsk): CorsRule | undefined {
  return rules.find(
    (r) =>
      r.allowedMethods.includes(ask.method)
      && r.allowedOrigins.some((o) => wildcardPattern(o)(ask.origin))
      && ask.headers.every((h) => r.allowedHeaders.some((a) => wildcardPattern(a.toLowerCase())(h)))
  );
}
