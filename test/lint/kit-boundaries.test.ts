import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/runnable.js';

// The layer rules of .dependency-cruiser.cjs (what `npm run lint` runs) over a small tree laid
// out like the repo: plugins/ and vendors/ reach core only through the kit entry points, and
// the vendor kit reaches neither Fastify nor pino nor the gateway's internals.

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-kit-rules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tsconfig = { compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } };
  files['tsconfig.json'] = JSON.stringify(tsconfig);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  // Bare imports (fastify, pino) resolve to the repo's own packages.
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  spawnSync('ln', ['-s', join(REPO, 'node_modules'), join(dir, 'node_modules')]);
  return dir;
}

/** `rule: from -> to` for each violation dependency-cruiser reports on the tree. */
function violations(dir: string): string[] {
  const cli = join(REPO, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const config = join(REPO, '.dependency-cruiser.cjs');
  const layers = ['core', 'plugins', 'vendors'].filter((l) => existsSync(join(dir, l)));
  const r = spawnSync(process.execPath, [cli, ...layers, '--config', config, '-T', 'json'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (!r.stdout) throw new Error(`dependency-cruiser failed: ${r.stderr}`);
  type Report = { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
  const out = JSON.parse(r.stdout) as Report;
  // A package resolves through the node_modules link to its real path: name it from node_modules/ on.
  const to = (path: string) => path.replace(/^.*\/node_modules\//, 'node_modules/');
  return out.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${to(v.to)}`).sort();
}

t.test('plugins and vendors import core through the kits alone', async (t) => {
  const dir = tree({
    'core/ids.ts': 'export const id = 1;\n',
    'core/capabilities/index.ts': 'export const cap = 1;\n',
    'core/kit/vendor.ts': "export { id } from '../ids.js';\n",
    'core/kit/area.ts': "export * from './vendor.js';\n",
    'plugins/good/index.ts':
      "import { id } from '../../core/kit/area.js';\nimport { cap } from '../../core/capabilities/index.js';\n"
      + 'export const x = id + cap;\n',
    'plugins/bad/index.ts': "import { id } from '../../core/ids.js';\nexport const x = id;\n",
    'vendors/good/index.ts': "import { id } from '../../core/kit/vendor.js';\nexport const x = id;\n",
    'vendors/bad/index.ts': "import { id } from '../../core/kit/area.js';\nexport const x = id;\n",
    'vendors/worse/index.ts': "import type { X } from '../../core/ids.js';\nexport type Y = X;\n",
  });
  t.same(violations(dir), [
    'plugins-only-through-the-kits: plugins/bad/index.ts -> core/ids.ts',
    'vendors-only-through-the-vendor-kit: vendors/bad/index.ts -> core/kit/area.ts',
    'vendors-only-through-the-vendor-kit: vendors/worse/index.ts -> core/ids.ts',
  ]);
});

t.test("the vendor kit's types reach no Fastify, pino or gateway internals", async (t) => {
  const dir = tree({
    'core/ids.ts': "import type { Logger } from 'pino';\nexport type L = Logger;\n",
    'core/http/pagination.ts': 'export const page = 1;\n',
    'core/http/idempotency.ts': "import type { FastifyInstance } from 'fastify';\nexport type F = FastifyInstance;\n",
    'core/wallet/money.ts': 'export const usd = 1;\n',
    'core/kit/vendor.ts':
      "export type { L } from '../ids.js';\nexport { page } from '../http/pagination.js';\n"
      + "export { usd } from '../wallet/money.js';\n",
    'core/kit/area.ts': "export * from './vendor.js';\nexport type { F } from '../http/idempotency.js';\n",
  });
  t.same(violations(dir), [
    'vendor-kit-not-to-core-internals: core/kit/vendor.ts -> core/wallet/money.ts',
    'vendor-kit-not-to-core-internals: core/kit/vendor.ts -> node_modules/pino/pino.js',
  ]);
});
