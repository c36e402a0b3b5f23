import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CHECK_CODES, ERRORS, apiError, errorBody, type ErrorCode } from '../../core/errors.js';

// docs/errors.md is the published error catalogue; core/errors.ts is what the gateway
// answers with. This keeps the two in step.

const doc = readFileSync(fileURLToPath(new URL('../../docs/errors.md', import.meta.url)), 'utf8');

/** The lines of one `## Title` section, up to the next `## `. */
function section(title: string): string[] {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${title}`);
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

interface Row {
  code: string;
  status: number;
  retryable: string;
  meaning: string;
}

function catalogue(): Row[] {
  const rows: Row[] = [];
  for (const line of section('Catalogue')) {
    const m = /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|\s*(\S+)\s*\|\s*(.*?)\s*\|\s*$/.exec(line);
    if (m) rows.push({ code: m[1], status: Number(m[2]), retryable: m[3], meaning: m[4] });
  }
  return rows;
}

t.test('the catalogue lists every code of core/errors.ts with its status and retryable', async (t) => {
  const rows = catalogue();
  t.ok(rows.length > 0, 'the Catalogue section has a table of codes');
  const documented = new Map(rows.map((r) => [r.code, r]));
  t.equal(documented.size, rows.length, 'no code is listed twice');
  for (const [code, e] of Object.entries(ERRORS)) {
    const row = documented.get(code);
    if (!row) {
      t.fail(`${code} (${e.status}) is missing from docs/errors.md`);
      continue;
    }
    t.equal(row.status, e.status, `${code}: status in the docs`);
    t.equal(row.retryable, e.retryable ? 'yes' : 'no', `${code}: retryable in the docs`);
    t.ok(row.meaning.length > 10, `${code}: has a meaning`);
  }
  for (const r of rows) t.ok(r.code in ERRORS, `${r.code} in docs/errors.md is a code of core/errors.ts`);
});

t.test('the documented body fields are the ones the gateway renders', async (t) => {
  const rendered = errorBody(
    apiError('validation_failed', 'x is required.', { param: 'x', details: { errors: [] } }),
    'req_1'
  ).error;
  const fields = section('The error body')
    .map((l) => /^\|\s*`([a-z_]+)`\s*\|/.exec(l)?.[1])
    .filter((f): f is string => !!f);
  t.same([...fields].sort(), Object.keys(rendered).sort());
  // And the example in that section parses and has the same members.
  const example = /```json\n([\s\S]*?)```/.exec(section('The error body').join('\n'));
  t.ok(example, 'the section has a JSON example');
  const parsed = JSON.parse(example![1]).error;
  t.same(Object.keys(parsed).sort(), Object.keys(rendered).sort());
  t.ok(parsed.code in ERRORS);
  t.equal(parsed.status, ERRORS[parsed.code as ErrorCode].status);
});

t.test('the check outcomes are the CHECK_CODES of core/errors.ts, meanings included', async (t) => {
  const rows = section('Check outcomes')
    .map((l) => /^\|\s*`([a-z_]+)`\s*\|\s*(.*?)\s*\|\s*$/.exec(l))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => [m[1], m[2]]);
  t.same(Object.fromEntries(rows), CHECK_CODES);
  for (const [code] of rows) t.notOk(code in ERRORS, `${code} is not also an error code`);
});
