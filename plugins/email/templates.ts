import type { Kysely } from 'kysely';
import {
  apiError,
  fieldError,
  iso,
  newestFirst,
  newId,
  TaskStopped,
  type CursorPos,
  type WorkerPool,
} from '../../core/kit/area.js';
import type { TemplateBodyT } from './schemas.js';
import type { Rendered, tasks } from './template-tasks.js';

interface Row {
  template_id: string;
  account_id: string;
  name: string;
  subject: string;
  html: string | null;
  text: string | null;
  created_at: number | string;
  updated_at: number | string;
}

export const wireTemplate = (r: Row) => ({
  template_id: r.template_id,
  name: r.name,
  subject: r.subject,
  html: r.html,
  text: r.text,
  created_at: iso(Number(r.created_at)),
  updated_at: iso(Number(r.updated_at)),
});

/** Email templates (mustache: `{{var}}` HTML-escaped in the HTML part), one account's own. */
export class EmailTemplates {
  constructor(
    private readonly db: Kysely<any>,
    private readonly limits: { maxBytes: number; renderMs: number },
    private readonly pool: WorkerPool<typeof tasks>
  ) {}

  private check(b: TemplateBodyT): void {
    if (b.html === undefined && b.text === undefined)
      throw fieldError('html', 'or text is required', 'A template needs html, text or both.');
    const bytes = Buffer.byteLength(b.subject) + Buffer.byteLength(b.html ?? '') + Buffer.byteLength(b.text ?? '');
    if (bytes > this.limits.maxBytes)
      throw apiError('payload_too_large', `The template is ${bytes} bytes, over the cap of ${this.limits.maxBytes}.`, {
        details: { max_bytes: this.limits.maxBytes },
      });
  }

  async create(accountId: string, b: TemplateBodyT) {
    this.check(b);
    const now = Date.now();
    const row: Row = {
      template_id: newId('etpl'),
      account_id: accountId,
      name: b.name,
      subject: b.subject,
      html: b.html ?? null,
      text: b.text ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('email_templates').values(row).execute();
    return wireTemplate(row);
  }

  async update(accountId: string, id: string, b: TemplateBodyT) {
    this.check(b);
    const set = {
      name: b.name,
      subject: b.subject,
      html: b.html ?? null,
      text: b.text ?? null,
      updated_at: Date.now(),
    };
    const r = await this.db
      .updateTable('email_templates')
      .set(set)
      .where('account_id', '=', accountId)
      .where('template_id', '=', id)
      .executeTakeFirst();
    if (!Number(r.numUpdatedRows)) throw notFound(id);
    return wireTemplate(await this.get(accountId, id));
  }

  async get(accountId: string, id: string): Promise<Row> {
    const row = await this.db
      .selectFrom('email_templates')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('template_id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(id);
    return row as Row;
  }

  async list(accountId: string, limit: number, cur?: CursorPos): Promise<Row[]> {
    const q = this.db.selectFrom('email_templates').selectAll().where('account_id', '=', accountId);
    return (await newestFirst(q, 'template_id', limit, cur).execute()) as Row[];
  }

  async remove(accountId: string, id: string): Promise<void> {
    const r = await this.db
      .deleteFrom('email_templates')
      .where('account_id', '=', accountId)
      .where('template_id', '=', id)
      .executeTakeFirst();
    if (!Number(r.numDeletedRows)) throw notFound(id);
  }

  /** Fill a template, or only derive the text part of a message (`parts`), in a worker thread. */
  async render(
    accountId: string,
    parts: { subject: string; html?: string; text?: string },
    vars: object
  ): Promise<Rendered> {
    const { renderMs } = this.limits;
    try {
      return await this.pool.run(
        accountId,
        'render',
        { ...parts, vars: vars as Record<string, unknown> },
        { timeoutMs: renderMs }
      );
    } catch (e) {
      if (e instanceof TaskStopped && e.reason === 'timeout')
        throw apiError('unprocessable', `The template did not render within ${renderMs} ms with these template_vars.`, {
          param: 'template_vars',
        });
      if ((e instanceof TaskStopped && e.reason === 'memory') || (e as Error).name === 'RangeError')
        throw apiError('payload_too_large', 'The template rendered with these template_vars is too large.', {
          param: 'template_vars',
        });
      if ((e as Error).message?.includes('Unclosed') || (e as Error).message?.includes('Unopened'))
        throw fieldError('template_id', `is not a valid mustache template: ${(e as Error).message.split('\n')[0]}`);
      throw e;
    }
  }
}

const notFound = (id: string) =>
  apiError('not_found', `No email template ${id} in this account.`, { param: 'template_id' });
