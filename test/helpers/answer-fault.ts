import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { DIALECT } from './app.js';

/**
 * Make storing an idempotent answer fail: a trigger refuses the update that marks a claim
 * done, so a route's effect and its answer are split exactly where a crash would split them.
 * A route that commits both together (core/http/idempotent-transaction.ts) rolls its rows back
 * and answers 500; one that stores its answer apart leaves them behind. Returns the undo.
 */
export async function failStoringAnswers(app: FastifyInstance): Promise<() => Promise<void>> {
  const db = app.svc.db;
  if (DIALECT === 'sqlite') {
    await sql`create trigger fail_answer before update on idempotency_keys when new.state = 'done'
      begin select raise(abort, 'injected: the answer could not be stored'); end`.execute(db);
    return async () => {
      await sql`drop trigger fail_answer`.execute(db);
    };
  }
  await sql`create function fail_answer() returns trigger language plpgsql as $$
    begin raise exception 'injected: the answer could not be stored'; end $$`.execute(db);
  await sql`create trigger fail_answer before update on idempotency_keys
    for each row when (new.state = 'done') execute function fail_answer()`.execute(db);
  return async () => {
    await sql`drop trigger fail_answer on idempotency_keys`.execute(db);
    await sql`drop function fail_answer()`.execute(db);
  };
}
