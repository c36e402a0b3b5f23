import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import { makeApp, activate } from '../helpers/app.js';
import type { Tap } from '../helpers/tap.js';

// database-independent: the docs' example area and adapter; the charge is core/wallet's tests', on both.

// docs/plugins.md ends with a complete third-party area and vendor adapter. This installs them
// from the page into a temp project, as an operator would, and runs them against a fake of
// the vendor's API: the example in the docs is code that works.

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(join(root, 'docs/plugins.md'), 'utf8');

function installExample(t: Tap): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-plugins-doc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files = [...doc.matchAll(/<!-- file: (\S+) -->\n```\w+\n([\s\S]*?)```/g)];
  if (files.length !== 4)
    throw new Error(`docs/plugins.md should hold the 4 files of the example, found ${files.length}`);
  for (const [, path, text] of files) {
    const file = join(dir, 'node_modules', path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  // The operator's project has svc-gateway (this checkout) and typebox installed.
  mkdirSync(join(dir, 'node_modules', 'svc-gateway'));
  writeFileSync(
    join(dir, 'node_modules', 'svc-gateway', 'package.json'),
    JSON.stringify({ name: 'svc-gateway', type: 'module', exports: './index.js' })
  );
  writeFileSync(
    join(dir, 'node_modules', 'svc-gateway', 'index.js'),
    `export * from ${JSON.stringify(pathToFileURL(join(root, 'core/index.js')).href)};\n`
  );
  symlinkSync(join(root, 'node_modules', '@sinclair'), join(dir, 'node_modules', '@sinclair'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'operator-project', private: true }));
  return dir;
}

interface Lingo {
  url: string;
  seen: { method?: string; url?: string; authorization?: string; body: any }[];
  answer: { status: number; body: unknown; headers?: Record<string, string> };
}

/** A fake of the Lingo API from the docs, speaking its wire format. */
async function fakeLingo(t: Tap): Promise<Lingo> {
  const state: Lingo = { url: '', seen: [], answer: { status: 200, body: null } };
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const body = raw ? JSON.parse(raw) : undefined;
    state.seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, body });
    const a =
      state.answer.body === null && req.url === '/v2/translate'
        ? {
            status: 200,
            body: {
              translation: `[${body.target_lang}] ${body.text}`,
              detected_source_lang: 'en',
              billed_characters: body.text.length,
            },
          }
        : state.answer;
    res.writeHead(a.status, { 'content-type': 'application/json', ...(a.headers ?? {}) });
    res.end(JSON.stringify(a.body ?? { characters_used: 0 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`;
  return state;
}

const lingoVendor = (url: string, extra: Record<string, unknown> = {}) => ({
  id: 'lingo',
  use: 'svc-vendor-lingo',
  config: { api_key: 'lingo-secret-key', base_url: url, ...extra },
});

t.test('the example area and adapter translate, charge and report the cost', async (t) => {
  const dir = installExample(t);
  const lingo = await fakeLingo(t);
  const { app } = await makeApp(
    t,
    { plugins: { 'svc-area-translate': { max_chars: 50 } }, vendors: [lingoVendor(lingo.url)] },
    { baseDir: dir }
  );
  const a = await activate(app);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/translate',
    headers: a.auth,
    payload: { text: 'good morning', target_lang: 'de' },
  });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), { text: '[de] good morning', detected_source_lang: 'en', vendor: 'lingo' });
  t.equal(res.headers['x-svc-vendor'], 'lingo');
  t.equal(res.headers['x-svc-cost-usd'], '0.000240', '12 characters × 20 micro-USD');
  t.equal(lingo.seen[0].authorization, 'Bearer lingo-secret-key');
  t.same(lingo.seen[0].body, { text: 'good morning', target_lang: 'de' });
  const bal = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(bal.json().balance_usd, 5 - 0.00024);

  const big = await app.inject({
    method: 'POST',
    url: '/v1/translate',
    headers: a.auth,
    payload: { text: 'x'.repeat(51), target_lang: 'de' },
  });
  t.equal(big.statusCode, 413);
  t.equal(big.json().error.param, 'text');
  t.equal(lingo.seen.length, 1, 'a refused request never reaches the vendor');

  t.equal(app.svc.vendors.get('lingo')?.redactedConfig.api_key, '[redacted]', 'the secret() field is redacted');
  const health = await app.svc.vendors.get('lingo')!.instance.health!({ signal: AbortSignal.timeout(2000) });
  t.same(health, { ok: true });
  t.equal(lingo.seen.at(-1)?.url, '/v2/usage');
});

t.test('vendor failures come back classified, and nothing is charged', async (t) => {
  const dir = installExample(t);
  const lingo = await fakeLingo(t);
  const { app } = await makeApp(
    t,
    { plugins: { 'svc-area-translate': true }, vendors: [lingoVendor(lingo.url)] },
    { baseDir: dir }
  );
  const a = await activate(app);
  lingo.answer = { status: 401, body: { message: 'bad key' } };
  const res = await app.inject({
    method: 'POST',
    url: '/v1/translate',
    headers: a.auth,
    payload: { text: 'hi', target_lang: 'fr' },
  });
  t.equal(res.statusCode, 502);
  t.equal(res.json().error.code, 'vendor_error');
  t.equal(res.json().error.details.attempts[0].status, 'auth');
  t.notMatch(res.body, /lingo-secret-key/);
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 5);
});

t.test('without a vendor instance the area says so', async (t) => {
  const dir = installExample(t);
  const { app } = await makeApp(t, { plugins: { 'svc-area-translate': {} } }, { baseDir: dir });
  const a = await activate(app);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/translate',
    headers: a.auth,
    payload: { text: 'hi', target_lang: 'fr' },
  });
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'no_vendor_available');
});

t.test('a bad adapter config stops the boot with the key path', async (t) => {
  const dir = installExample(t);
  await t.rejects(
    makeApp(t, { vendors: [{ id: 'lingo', use: 'svc-vendor-lingo', config: {} }] }, { baseDir: dir }),
    /vendors\[0\]\.config\.api_key/
  );
  await t.rejects(
    makeApp(t, { plugins: { 'svc-area-translate': { max_chars: 'many' } } }, { baseDir: dir }),
    /plugins\.svc-area-translate\.max_chars/
  );
});
