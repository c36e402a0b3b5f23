import t from 'tap';
import { gatewayWithAccount } from '../../helpers/gateway-process.js';
import { makePdf, pageCount } from '../../fakes/test-pdfs.js';
import { serveFiles } from './setup.js';

// database-independent: the worker's task module in the CLI process; no row of its own.

// pdf-lib runs in worker threads that load vendors/pdf-lib/tasks by path (core/isolation/
// task-module.ts): from the sources, from dist/, and from the bundled CLI, whose chunks sit in
// dist/bin/chunks/ with no task module beside them. This merges and splits through the real CLI
// process, which runs the bundle when dist/ is built and fresh (`npm run build`), else the sources.
t.setTimeout(180_000);

t.test('merge and split on the gateway process: the worker finds its task module', async (t) => {
  const url = await serveFiles(t, { a: await makePdf(2), b: await makePdf(3) });
  const { gw, headers } = await gatewayWithAccount(t, 'pdf-process-');
  const merged = await fetch(`${gw.url}/v1/pdf/merge`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ urls: [url('a'), url('b')] }),
  });
  const body = await merged.json();
  t.equal(merged.status, 200, JSON.stringify(body));
  t.equal(body.pages, 5);
  t.equal(await pageCount(Buffer.from(await (await fetch(body.pdf_url)).arrayBuffer())), 5);
  const split = await fetch(`${gw.url}/v1/pdf/split`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: url('b'), ranges: ['1', '2-'] }),
  });
  const parts = await split.json();
  t.equal(split.status, 200, JSON.stringify(parts));
  t.same(
    parts.parts.map((p: { pages: number }) => p.pages),
    [1, 2]
  );
});
