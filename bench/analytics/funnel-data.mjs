// The funnel side's data: the generated events (generate.mjs) written straight into the gateway's
// database (SQLite file or PostgreSQL schema) for an account, and the same events in DuckDB (in
// memory, in this process) with the same funnel in SQL, the anchor.
import { DuckDBInstance } from '@duckdb/node-api';
import Database from 'better-sqlite3';
import { FUNNEL, generateEvents } from './generate.mjs';

const CHUNK = 50_000;

/** Every generated event as a row of analytics_events, in chunks of column arrays. */
function* chunks(total, people) {
  const cols = () => ({ uuid: [], event: [], distinct_id: [], ts: [], properties: [] });
  let c = cols();
  const rows = [];
  generateEvents(total, people, (event, id, ts, plan) => rows.push([event, id, ts, plan]));
  for (let n = 0; n < rows.length; n++) {
    const [event, id, ts, plan] = rows[n];
    c.uuid.push(`bench-${n}`);
    c.event.push(event);
    c.distinct_id.push(id);
    c.ts.push(ts);
    c.properties.push(`{"plan":"${plan}","$lib":"bench"}`);
    if (c.uuid.length === CHUNK || n === rows.length - 1) {
      yield c;
      c = cols();
    }
  }
}

/**
 * Into the gateway's SQLite file, beside the running gateway (WAL), then checkpointed, for the
 * account that tracked the `bench-probe` event; the rows written.
 */
export function loadSqlite(file, total, people) {
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  const accountId = db.prepare("select account_id from analytics_events where event = 'bench-probe'").pluck().get();
  const insert = db.prepare(
    'insert into analytics_events (account_id, uuid, event, distinct_id, ts, properties, received_at) '
      + 'values (?, ?, ?, ?, ?, ?, ?)'
  );
  let n = 0;
  const now = Date.now();
  for (const c of chunks(total, people))
    db.transaction(() => {
      for (let i = 0; i < c.uuid.length; i++, n++)
        insert.run(accountId, c.uuid[i], c.event[i], c.distinct_id[i], c.ts[i], c.properties[i], now);
    })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return n;
}

/** Into the gateway's PostgreSQL schema (a `pg` client) as loadSqlite does, in multi-row inserts. */
export async function loadPostgres(client, schema, total, people) {
  const probe = await client.query(`select account_id from ${schema}.analytics_events where event = 'bench-probe'`);
  const accountId = probe.rows[0].account_id;
  let n = 0;
  const now = Date.now();
  for (const c of chunks(total, people)) {
    await client.query(
      `insert into ${schema}.analytics_events (account_id, uuid, event, distinct_id, ts, properties, received_at)
        select $1, * , $7 from unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[])`,
      [accountId, c.uuid, c.event, c.distinct_id, c.ts, c.properties, now]
    );
    n += c.uuid.length;
  }
  await client.query(`analyze ${schema}.analytics_events`);
  return n;
}

/**
 * DuckDB in memory with the same events (appender), and the funnel of docs/analytics.md as SQL:
 * each person's first step-1 event, then each next step the earliest at or after the last one
 * (strictly after for a repeated name) within the window. No id is merged in the bench's data, so
 * the person is the distinct id. `funnel()` answers the people reaching each step.
 */
export async function duckdbFunnel(total, people) {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run('create table events (distinct_id varchar, event varchar, ts bigint, properties varchar)');
  const app = await conn.createAppender('events');
  generateEvents(total, people, (event, id, ts, plan) => {
    app.appendVarchar(id);
    app.appendVarchar(event);
    app.appendBigInt(BigInt(ts));
    app.appendVarchar(`{"plan":"${plan}","$lib":"bench"}`);
    app.endRow();
  });
  app.closeSync();
  const funnel = async (steps, from, to, windowMs) => {
    const q = (s) => `'${s.replaceAll("'", "''")}'`;
    const parts = [
      `e as materialized (select distinct_id as person, event, ts from events
        where ts >= ${from} and ts < ${to} and event in (${[...new Set(steps)].map(q).join(', ')}))`,
      `s1 as materialized (select person, min(ts) as t1, min(ts) as tp from e where event = ${q(steps[0])} group by person)`,
    ];
    for (let k = 1; k < steps.length; k++) {
      const after = steps.slice(0, k).includes(steps[k]) ? '>' : '>=';
      parts.push(`s${k + 1} as materialized (select s.person, s.t1, min(e.ts) as tp from s${k} s join e
        on e.person = s.person and e.event = ${q(steps[k])} and e.ts ${after} s.tp and e.ts <= s.t1 + ${windowMs}
        group by s.person, s.t1)`);
    }
    const counts = steps.map((_, k) => `(select count(*) from s${k + 1})`).join(', ');
    const reader = await conn.runAndReadAll(`with ${parts.join(', ')} select ${counts}`);
    return reader.getRows()[0].map(Number);
  };
  return { funnel, close: () => (conn.closeSync(), instance.closeSync?.()) };
}

export { FUNNEL };
