import { sql, type Kysely } from 'kysely';
import { apiError, decodeCursor, iso, newestFirst, newId, pageOf, type ListQueryT } from '../../core/kit/area.js';
import { group, type Frame } from './fingerprint.js';

export type IssueStatus = 'unresolved' | 'resolved' | 'ignored';

/** One occurrence as either ingest path (the JSON API, a Sentry event) hands it over. */
export interface ErrorInput {
  message: string;
  code?: string;
  stack?: string;
  tags: Record<string, string>;
  /** Innermost first; from the stack's text or a Sentry event's frames. */
  frames: Frame[];
  /** Exception type; else the caller's code stands for it in grouping. */
  type: string | null;
  source: 'api' | 'sentry';
  /** When it happened, if the sender says (Sentry's `timestamp`); else now. */
  at?: number;
}

const issueWire = (r: any) => ({
  issue_id: r.issue_id as string,
  title: r.title as string,
  type: (r.type ?? null) as string | null,
  culprit: (r.culprit ?? null) as string | null,
  status: r.status as IssueStatus,
  count: Number(r.count),
  first_seen: iso(Number(r.created_at)),
  last_seen: iso(Number(r.last_seen)),
});

const eventWire = (r: any) => ({
  error_id: r.error_id as string,
  issue_id: r.issue_id as string,
  message: r.message as string,
  code: (r.code ?? null) as string | null,
  stack: (r.stack ?? null) as string | null,
  tags: JSON.parse(r.tags) as Record<string, string>,
  source: r.source as string,
  created_at: iso(Number(r.created_at)),
});

/** Issues and their error events: ingest is one upsert and one insert in one transaction. */
export class IssueStore {
  constructor(
    private readonly db: Kysely<any>,
    private readonly topFrames: number
  ) {}

  /** Records an occurrence; durable when this resolves. A resolved issue that recurs reopens. */
  async record(accountId: string, e: ErrorInput): Promise<{ error_id: string; issue_id: string }> {
    const type = e.type ?? e.code ?? null;
    const g = group({ message: e.message, type, frames: e.frames, topFrames: this.topFrames });
    const at = e.at ?? Date.now();
    const errorId = newId('err');
    return this.db.transaction().execute(async (trx) => {
      const issue = await trx
        .insertInto('obs_issues')
        .values({
          issue_id: newId('iss'),
          account_id: accountId,
          fingerprint: g.fingerprint,
          type: g.type,
          title: g.title,
          culprit: g.culprit,
          status: 'unresolved',
          count: 1,
          created_at: at,
          last_seen: at,
          status_changed_at: null,
        })
        .onConflict((oc) =>
          oc.columns(['account_id', 'fingerprint']).doUpdateSet({
            count: sql`obs_issues.count + 1`,
            last_seen: sql`case when excluded.last_seen > obs_issues.last_seen
              then excluded.last_seen else obs_issues.last_seen end`,
            status: sql`case when obs_issues.status = 'resolved' then 'unresolved' else obs_issues.status end`,
            status_changed_at: sql`case when obs_issues.status = 'resolved'
              then excluded.last_seen else obs_issues.status_changed_at end`,
          })
        )
        .returning('issue_id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('obs_errors')
        .values({
          error_id: errorId,
          account_id: accountId,
          issue_id: issue.issue_id,
          message: e.message,
          code: e.code ?? null,
          stack: e.stack ?? null,
          tags: JSON.stringify(e.tags),
          source: e.source,
          created_at: at,
        })
        .execute();
      return { error_id: errorId, issue_id: issue.issue_id as string };
    });
  }

  async list(accountId: string, q: ListQueryT & { status?: IssueStatus }) {
    const pos = decodeCursor(q.cursor);
    let query = this.db.selectFrom('obs_issues').selectAll().where('account_id', '=', accountId);
    if (q.status) query = query.where('status', '=', q.status);
    const rows = await newestFirst(query, 'issue_id', q.limit + 1, pos).execute();
    return pageOf(rows, q.limit, (r: any) => ({ t: Number(r.created_at), id: r.issue_id }), issueWire);
  }

  private async row(accountId: string, issueId: string) {
    const r = await this.db
      .selectFrom('obs_issues')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('issue_id', '=', issueId)
      .executeTakeFirst();
    if (!r) throw apiError('not_found', `No issue ${issueId} in this account.`);
    return r;
  }

  async get(accountId: string, issueId: string) {
    return issueWire(await this.row(accountId, issueId));
  }

  async events(accountId: string, issueId: string, q: ListQueryT) {
    await this.row(accountId, issueId);
    const pos = decodeCursor(q.cursor);
    const query = this.db
      .selectFrom('obs_errors')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('issue_id', '=', issueId);
    const rows = await newestFirst(query, 'error_id', q.limit + 1, pos).execute();
    return pageOf(rows, q.limit, (r: any) => ({ t: Number(r.created_at), id: r.error_id }), eventWire);
  }

  /** Every move between the three states is allowed; setting the current one changes nothing. */
  async setStatus(accountId: string, issueId: string, status: IssueStatus) {
    const r = await this.row(accountId, issueId);
    if (r.status !== status)
      await this.db
        .updateTable('obs_issues')
        .set({ status, status_changed_at: Date.now() })
        .where('issue_id', '=', issueId)
        .where('account_id', '=', accountId)
        .execute();
    return this.get(accountId, issueId);
  }

  /** Retention: error events older than `before`, then issues last seen before it (their events are gone). */
  async sweep(before: number, limit: number): Promise<number> {
    const oldErrors = this.db.selectFrom('obs_errors').select('error_id').where('created_at', '<', before).limit(limit);
    const a = await this.db.deleteFrom('obs_errors').where('error_id', 'in', oldErrors).executeTakeFirst();
    const oldIssues = this.db.selectFrom('obs_issues').select('issue_id').where('last_seen', '<', before).limit(limit);
    const b = await this.db.deleteFrom('obs_issues').where('issue_id', 'in', oldIssues).executeTakeFirst();
    return Math.max(Number(a.numDeletedRows), Number(b.numDeletedRows));
  }
}
