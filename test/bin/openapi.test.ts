import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeApp } from '../helpers/app.js';
import { cliEnv, runCli } from './fixtures/cli.js';

// database-independent: the openapi command opens no database (its test says so).

t.test('openapi prints the document from GET /v1/openapi.json', async (t) => {
  // Whether this build serves the document, asked of the app itself.
  const { app } = await makeApp(t);
  const served = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).statusCode === 200;
  const { env, home, dataDir } = await cliEnv(t);
  const out = join(home, 'openapi.json');
  const [toStdout, toFile] = await Promise.all([
    runCli(['openapi'], { env }),
    runCli(['openapi', '--out', out], { env }),
  ]);
  t.ok(served, 'the app serves the document');
  t.equal(toStdout.code, 0, toStdout.stderr);
  const doc = JSON.parse(toStdout.stdout);
  t.match(doc, { openapi: /^3\.1/ });
  t.ok(doc.paths['/v1/activate'], 'the account routes are in it');
  t.equal(toFile.code, 0, toFile.stderr);
  t.same(JSON.parse(readFileSync(out, 'utf8')), doc, '--out writes the same document');
  t.match(toFile.stdout, `to ${out}`);
  t.same(readdirSync(dataDir), [], 'the configured data dir and database were not touched');
});

t.test('openapi with a broken config exits 2', async (t) => {
  const { env } = await cliEnv(t);
  const r = await runCli(['openapi'], { env: { ...env, SVC_PORT: '99999' } });
  t.equal(r.code, 2);
  t.match(r.stderr, /server\.port/);
});
