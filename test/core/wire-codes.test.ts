import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECK_CODES, ERRORS } from '../../core/errors.js';

// Every code the gateway puts on the wire is declared in core/errors.ts (ERRORS, or CHECK_CODES
// for check outcomes) and so documented in docs/errors.md. `apiError()` is typed, but a code in
// an object literal (`{ code: 'x', message }`) or a `new ApiError('x')` behind a cast is not:
// this reads the sources for such literals and fails on one that is in neither table.

const root = fileURLToPath(new URL('../..', import.meta.url));
const PATTERNS = [
  /\bapiError\(\s*'([a-z][a-z_]*)'/g,
  /\bnew ApiError\(\s*'([a-z][a-z_]*)'/g,
  /\bcode: '([a-z][a-z_]*)'/g,
];

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

function literals(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const dir of ['core', 'plugins', 'vendors']) {
    for (const file of sources(join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      for (const re of PATTERNS) {
        for (const m of text.matchAll(re)) {
          const line = text.slice(0, m.index).split('\n').length;
          found.set(m[1], [...(found.get(m[1]) ?? []), `${relative(root, file)}:${line}`]);
        }
      }
    }
  }
  return found;
}

t.test('every error-code literal in core, plugins and vendors is declared in core/errors.ts', async (t) => {
  const found = literals();
  // The scan sees both kinds of place, so an empty pass means nothing.
  t.ok(found.has('not_found'), 'apiError literals are read');
  t.ok(found.has('vendor_rejected'), '{ code: ... } literals are read');
  const undeclared = [...found].filter(([code]) => !(code in ERRORS || code in CHECK_CODES));
  t.same(Object.fromEntries(undeclared), {}, 'codes (and where they are written) missing from core/errors.ts');
});
