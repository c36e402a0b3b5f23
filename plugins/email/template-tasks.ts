// What the email area runs in its template worker threads (core/isolation/worker-pool.ts):
// filling a template, whose cost the caller's variables choose, and turning HTML into the text
// part. Neither may hold the event loop, and a timeout must be able to end either. Loaded by
// path in the thread; the area imports only its types.

type Mustache = typeof import('mustache').default;
type HtmlToText = typeof import('html-to-text');
let lib: Promise<Mustache> | undefined;
let h2t: Promise<HtmlToText> | undefined;

function mustache(): Promise<Mustache> {
  lib ??= import('mustache').then((m) => {
    const mustache = (m.default ?? m) as Mustache;
    mustache.templateCache = undefined; // a thread's heap would grow with every template parsed
    return mustache;
  });
  return lib;
}

const verbatim = (s: unknown) => String(s);

export interface Rendered {
  subject: string;
  html?: string;
  text?: string;
}

export const tasks = {
  /**
   * The message's parts: `{{var}}` in the HTML is HTML-escaped, in the subject and the text it is
   * not (they are not HTML); the text part comes from the HTML when there is none.
   */
  async render(i: { subject: string; html?: string; text?: string; vars: Record<string, unknown> }): Promise<Rendered> {
    const m = await mustache();
    const subject = m.render(i.subject, i.vars, {}, { escape: verbatim });
    const html = i.html === undefined ? undefined : m.render(i.html, i.vars);
    let text = i.text === undefined ? undefined : m.render(i.text, i.vars, {}, { escape: verbatim });
    if (text === undefined && html !== undefined) text = (await tasks.toText({ html })).text;
    return { subject, ...(html !== undefined ? { html } : {}), ...(text !== undefined ? { text } : {}) };
  },

  /** The plain-text alternative of an HTML body (links kept as `text [url]`). */
  async toText(i: { html: string }): Promise<{ text: string }> {
    h2t ??= import('html-to-text');
    const { convert } = await h2t;
    return { text: convert(i.html, { wordwrap: 78, selectors: [{ selector: 'img', format: 'skip' }] }) };
  },
};
