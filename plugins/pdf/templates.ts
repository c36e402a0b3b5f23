import type { Kysely } from 'kysely';
import { iso } from '../../core/clock.js';
import { apiError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { CursorPos } from '../../core/http/pagination.js';
import type { TemplateT } from './schemas.js';
import { newestFirst } from '../../core/db/newest-first.js';

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
  lib ??= import('mustache').then((m) => (m.default ?? m) as Mustache);
  return lib;
}

function invalid(param: string, message: string) {
  return apiError('validation_failed', `${param} ${message}.`, { param, details: { errors: [{ param, message }] } });
}

export function wire(r: Row): TemplateT {
  return { template_id: r.template_id, name: r.name, html: r.html, created_at: iso(Number(r.created_at)) };
}

/** PDF templates: HTML with mustache tags, one account's own (another's is not found). */
export class TemplateStore {
  constructor(
    private readonly db: Kysely<any>,
    private readonly maxBytes: number
  ) {}

  async create(accountId: string, name: string, html: string): Promise<TemplateT> {
    const bytes = Buffer.byteLength(html);
    if (bytes > this.maxBytes)
      throw apiError(
        'payload_too_large',
        `html is ${bytes} bytes, over the cap of ${this.maxBytes} bytes a template.`,
        {
          param: 'html',
          details: { max_bytes: this.maxBytes },
        }
      );
    // Refused now (an unclosed section…) rather than at every generate that uses it.
    try {
      (await mustache()).parse(html);
    } catch (e) {
      throw invalid('html', `is not a valid mustache template: ${(e as Error).message.split('\n')[0]}`);
    }
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
  async render(accountId: string, id: string, vars: Record<string, unknown> = {}): Promise<string> {
    const row = await this.get(accountId, id);
    return (await mustache()).render(row.html, vars);
  }
}
