import type { Kysely } from 'kysely';
import {
  iso,
  apiError,
  newId,
  type CursorPos,
  newestFirst,
  TaskStopped,
  type WorkerPool,
  fieldError,
} from '../../core/kit/area.js';
import type { TemplateT } from './schemas.js';
import type { tasks } from './template-tasks.js';

interface Row {
  template_id: string;
  account_id: string;
  name: string;
  html: string;
  created_at: number | string;
}

type Mustache = typeof import('mustache').default;
let lib: Promise<Mustache> | undefined;
/** mustache is loaded on the first template, not at boot. */
export function mustache(): Promise<Mustache> {
  lib ??= import('mustache').then((m) => {
    const mustache = (m.default ?? m) as Mustache;
    // Its cache keeps every template it ever parsed: the process's heap would grow with them.
    mustache.templateCache = undefined;
    return mustache;
  });
  return lib;
}

/** Deepest nesting of sections (`{{#a}}`, `{{^a}}`) in parsed tokens; a loop, not recursion (5,000 levels). */
export function sectionDepth(tokens: unknown[]): number {
  let max = 0;
  const stack: [unknown[], number][] = [[tokens, 0]];
  while (stack.length) {
    const [list, depth] = stack.pop()!;
    for (const tok of list as unknown[][]) {
      if (tok[0] !== '#' && tok[0] !== '^') continue;
      max = Math.max(max, depth + 1);
      if (Array.isArray(tok[4])) stack.push([tok[4], depth + 1]);
    }
  }
  return max;
}

export interface TemplateLimits {
  maxBytes: number;
  maxDepth: number;
  /** Longest one rendering may take in its worker thread (ms). */
  renderMs: number;
}

export function wire(r: Row): TemplateT {
  return { template_id: r.template_id, name: r.name, html: r.html, created_at: iso(Number(r.created_at)) };
}

/** PDF templates: HTML with mustache tags, one account's own (another's is not found). */
export class TemplateStore {
  constructor(
    private readonly db: Kysely<any>,
    private readonly limits: TemplateLimits,
    private readonly pool: WorkerPool<typeof tasks>
  ) {}

  async create(accountId: string, name: string, html: string): Promise<TemplateT> {
    const { maxBytes, maxDepth } = this.limits;
    const bytes = Buffer.byteLength(html);
    if (bytes > maxBytes)
      throw apiError('payload_too_large', `html is ${bytes} bytes, over the cap of ${maxBytes} bytes a template.`, {
        param: 'html',
        details: { max_bytes: maxBytes },
      });
    // Refused now (an unclosed section, sections nested too deep) rather than at every generate.
    // Parsing is linear in the (capped) size: it stays on the event loop; rendering does not.
    let tokens: unknown[];
    try {
      tokens = (await mustache()).parse(html);
    } catch (e) {
      throw fieldError('html', `is not a valid mustache template: ${(e as Error).message.split('\n')[0]}`);
    }
    const depth = sectionDepth(tokens);
    if (depth > maxDepth)
      throw apiError(
        'payload_too_large',
        `html nests sections ${depth} deep, over the cap of ${maxDepth} levels a template.`,
        { param: 'html', details: { max_depth: maxDepth } }
      );
    const row: Row = { template_id: newId('tpl'), account_id: accountId, name, html, created_at: Date.now() };
    await this.db.insertInto('pdf_templates').values(row).execute();
    return wire(row);
  }

  async get(accountId: string, id: string): Promise<Row> {
    const row = await this.db
      .selectFrom('pdf_templates')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('template_id', '=', id)
      .executeTakeFirst();
    if (!row) throw apiError('not_found', `No template ${id} in this account.`, { param: 'template_id' });
    return row as Row;
  }

  /** `limit` rows after the cursor, newest first (the caller asks one more to know if there is a next page). */
  async list(accountId: string, limit: number, cur?: CursorPos): Promise<Row[]> {
    const q = this.db.selectFrom('pdf_templates').selectAll().where('account_id', '=', accountId);
    return (await newestFirst(q, 'template_id', limit, cur).execute()) as Row[];
  }

  async remove(accountId: string, id: string): Promise<void> {
    const r = await this.db
      .deleteFrom('pdf_templates')
      .where('account_id', '=', accountId)
      .where('template_id', '=', id)
      .executeTakeFirst();
    if (!Number(r.numDeletedRows))
      throw apiError('not_found', `No template ${id} in this account.`, { param: 'template_id' });
  }

  /** The template's HTML with `vars` filled in; `{{tags}}` are HTML-escaped, `{{{tags}}}` are not. */
  /**
   * Rendered in a worker thread, ended at `renderMs`: its cost is the caller's choice (sections
   * over long lists multiply), and on the event loop it held every account's requests.
   */
  async render(accountId: string, id: string, vars: Record<string, unknown> = {}): Promise<string> {
    const row = await this.get(accountId, id);
    const { renderMs } = this.limits;
    try {
      return await this.pool.run(accountId, 'render', { html: row.html, vars }, { timeoutMs: renderMs });
    } catch (e) {
      if (e instanceof TaskStopped && e.reason === 'timeout')
        throw apiError(
          'unprocessable',
          `The template did not render within ${renderMs} ms with these template_vars (sections nested over long `
            + 'lists multiply the work): nest fewer sections or send shorter lists.',
          { param: 'template_vars' }
        );
      if ((e instanceof TaskStopped && e.reason === 'memory') || (e as Error).name === 'RangeError')
        throw apiError(
          'payload_too_large',
          'The template rendered with these template_vars is too large or too deep.',
          {
            param: 'template_vars',
          }
        );
      throw e;
    }
  }
}
