import t from 'tap';
import { join } from 'node:path';
import { cliCommand } from '../helpers/cli-command.js';
import { startGateway } from '../helpers/gateway-process.js';
import { thirdPartyProject } from '../helpers/third-party.js';

// The CLI runs a bundle of the gateway (scripts/bundle-cli.mjs) while an installed plugin imports
// `svc-gateway` from dist/: two copies of core/errors. The plugin's apiError() must still be
// answered as the error it names, in the conventions' shape, not as a 500.
t.setTimeout(120_000);

t.test("a third-party area's apiError through the CLI process is the 4xx it names", async (t) => {
  const dir = await thirdPartyProject(t, ['svc-area-refuse']);
  t.comment(`the gateway runs ${cliCommand().at(-1)}`);
  const gw = await startGateway(t, dir, {
    data_dir: dir,
    database: { url: `sqlite:${join(dir, 'gateway.db')}` },
    plugins: { 'svc-area-refuse': {} },
  });
  const json = { 'content-type': 'application/json' };
  const act = await (await fetch(`${gw.url}/v1/activate`, { method: 'POST', headers: json, body: '{}' })).json();
  const auth = { ...json, authorization: `Bearer ${act.primary_api_key}` };
  for (const [code, status] of [
    ['payload_too_large', 413],
    ['conflict', 409],
  ] as const) {
    const res = await fetch(`${gw.url}/v1/refuse`, { method: 'POST', headers: auth, body: JSON.stringify({ code }) });
    const body = await res.json();
    t.equal(res.status, status, JSON.stringify(body));
    t.match(body, { error: { code, status, param: 'code', message: `refused with ${code}.` } });
  }
  gw.proc.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});
