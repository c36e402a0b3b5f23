import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway } from '../../helpers/gateway-process.js';

// The TypeScript kit fixtures (test/fixtures/ts-kit), compiled and installed by
// scripts/kit-fixtures.sh into SVC_KIT_PROJECT, a project where the packed gateway is installed
// (scripts/newcomer.sh --pack): that gateway, named in a YAML config beside them, serves the
// area's route through the vendor and charges the vendor's price; the misspelt vendor's
// compiled JavaScript stops its boot. Not a .test.ts: it runs once, from that script.

const PROJECT = process.env.SVC_KIT_PROJECT;
if (!PROJECT) throw new Error('SVC_KIT_PROJECT is not set: run scripts/kit-fixtures.sh PROJECT');
const CLI = [join(PROJECT, 'node_modules', 'svc-gateway', 'dist', 'bin', 'svc-gateway.js')];

function config(t: { teardown(fn: () => unknown): void }, vendor: string): string {
  const data = mkdtempSync(join(tmpdir(), 'svc-kit-'));
  t.teardown(() => rmSync(data, { recursive: true, force: true }));
  return `# An operator's config naming the two packages installed beside it.
server: { host: 127.0.0.1, port: 0 }
log: { level: warn }
data_dir: ${data}
database: { url: "sqlite:${data}/gateway.db" }
wallet: { markup: 1.5 }
plugins:
  svc-area-wordcount: { max_chars: 1000 }
vendors:
  - id: tally
    use: ${vendor}
    config: { ${vendor === 'svc-vendor-tally' ? 'micros_per_word: 40' : ''} }
`;
}

t.test('the area calls the vendor through the packed gateway, charged its price', async (t) => {
  const gw = await startGateway(t, PROJECT, config(t, 'svc-vendor-tally'), 'kit-typed', CLI);
  const json = { 'content-type': 'application/json' };
  const act = await (await fetch(`${gw.url}/v1/activate`, { method: 'POST', headers: json, body: '{}' })).json();
  const headers = { ...json, authorization: `Bearer ${act.primary_api_key}` };
  const res = await fetch(`${gw.url}/v1/wordcount`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ text: 'the quick brown fox' }),
  });
  if (res.status !== 200) t.comment(gw.output());
  t.equal(res.status, 200, 'POST /v1/wordcount answers 200');
  t.same(await res.json(), { words: 4, characters: 19, vendor: 'tally' }, "the vendor's answer");
  t.equal(res.headers.get('x-svc-vendor'), 'tally', 'from the instance the config names');
  // 4 words × 40 micro-USD (the vendor's price) × 1.5 (the markup) = 240 micro-USD.
  t.equal(Number(res.headers.get('x-svc-cost-usd')), 0.00024, 'charged price × markup');
  const balance = await (await fetch(`${gw.url}/v1/account/balance`, { headers })).json();
  t.equal(balance.balance_usd, 4.99976, 'the trial credit (5 USD) less the charge');
});

t.test("the misspelt vendor's JavaScript stops the boot with the nearest name", async (t) => {
  await t.rejects(startGateway(t, PROJECT, config(t, 'svc-vendor-tally-misspelt'), 'kit-misspelt', CLI), {
    message:
      /exited with 2 before listening:[\s\S]*vendor "tally" \(svc-vendor-tally-misspelt\): serves capability "text\.cuont", which its definition's serves does not name; did you mean "text\.count"\?/,
  });
});
