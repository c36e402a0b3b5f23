import { domainToASCII } from 'node:url';
import { fieldError, hasLineBreak, type EmailAddress } from '../../core/kit/area.js';

// An address as a caller writes it, `user@example.com` or `Name <user@bücher.example>`, checked
// strictly: a local part of RFC 5321's dot-atom (UTF-8 allowed, SMTPUTF8), a domain that IDNA
// maps to ASCII labels, and nothing that could become a header or a second address.

const ATEXT = /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+$/u;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The domain in ASCII (punycode), lower case, or undefined when it is no valid hostname. */
export function asciiDomain(domain: string): string | undefined {
  const ascii = domainToASCII(domain.trim());
  if (!ascii || ascii.length > 253) return undefined;
  const labels = ascii.toLowerCase().split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return undefined;
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return undefined;
  return labels.join('.');
}

/** `user@domain` checked; the domain returned in ASCII so one address has one spelling. */
export function checkAddress(raw: string, param: string): EmailAddress & { domain: string } {
  let name: string | undefined;
  let addr = raw.trim();
  if (hasLineBreak(raw)) throw fieldError(param, 'contains a line break', `${param} must not contain CR or LF.`);
  const angle = addr.match(/^(.*)<([^<>]+)>$/s);
  if (angle) {
    name = angle[1].trim().replace(/^"(.*)"$/s, '$1');
    addr = angle[2].trim();
    if (/[<>"\\]/.test(name))
      throw fieldError(
        param,
        'has a display name with <, >, " or \\',
        `${param}: the display name may not hold <, >, " or \\.`
      );
  }
  const at = addr.lastIndexOf('@');
  const local = addr.slice(0, at);
  const domain = at > 0 ? asciiDomain(addr.slice(at + 1)) : undefined;
  const localOk = local.length <= 64 && local.split('.').every((part) => ATEXT.test(part));
  if (at <= 0 || !localOk || !domain)
    throw fieldError(param, 'is not an email address', `${param}: "${raw.slice(0, 100)}" is not an email address.`);
  return { address: `${local}@${domain}`, domain, ...(name ? { name } : {}) };
}

/** The comparable form of an address for the suppression list: lower case, domain in ASCII. */
export function normalAddress(raw: string, param = 'email'): string {
  return checkAddress(raw, param).address.toLowerCase();
}
