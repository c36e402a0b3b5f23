// Whether bytes the gateway serves from its own origin may be shown inline: decided on the
// media type as a browser reads it (" Text/HTML; charset=x" is HTML), not on the raw header.

const TOKEN = "[!#$%&'*+.^_`|~0-9a-z-]+";
// Parameters with token or quoted values. No commas anywhere: a browser splits the header on
// them and takes the last type, so "text/plain;,text/html" is HTML to it.
const PARAM = `;[ \\t]*${TOKEN}=(?:${TOKEN}|"[^"\\\\,]*")[ \\t]*`;
const MEDIA_TYPE = new RegExp(`^(${TOKEN}/${TOKEN})[ \\t]*(?:${PARAM})*$`, 'i');

/**
 * The essence of a Content-Type value (`type/subtype`, trimmed, lower case, parameters
 * dropped), or undefined when the whole value is not one well-formed media type.
 */
export function mediaType(value: string): string | undefined {
  return MEDIA_TYPE.exec(value.trim())?.[1].toLowerCase();
}

// Types a browser renders as a document that can run script.
const ACTIVE = new Set([
  'text/html',
  'application/xhtml+xml',
  'image/svg+xml',
  'text/xml',
  'application/xml',
  'text/xsl',
]);

/**
 * True when a browser may run `contentType` as a page or script: HTML, XHTML, SVG, XSL and
 * XML of every kind (`*+xml` included), and anything that is not a well-formed media type,
 * since what a browser makes of that is its own guess.
 */
export function isActiveContent(contentType: string): boolean {
  const t = mediaType(contentType);
  return t === undefined || ACTIVE.has(t) || t.endsWith('+xml') || t.endsWith('/xml');
}
