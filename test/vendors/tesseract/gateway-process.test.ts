import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayWithAccount } from '../../helpers/gateway-process.js';
import { pdfOf } from '../../fakes/ocr-pdfs.js';

// The PDF worker's code is a string evaluated in the thread (pdf-worker-source.ts), the same
// from the TypeScript sources and from the compiled dist/: this reads a PDF through the real
// CLI process, which runs dist/ when it is built and fresh (`npm run build`), else the sources
// (test/helpers/cli-command.ts; SVC_TEST_FROM_SOURCE=1 forces them). One text page and one
// small scan: the embedded engine as `npx svc-gateway` serves it, pdfjs and Tesseract both.
t.setTimeout(120_000);

t.test('POST /v1/pdf/ocr on the gateway process: text layer and scan read', async (t) => {
  const pdf = await pdfOf([{ text: 'Typed page' }, { scan: 'SCANNED PAGE' }]);
  const files = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf));
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => files.close(() => resolve())));
  const { gw, headers } = await gatewayWithAccount(t, 'ocr-process-');
  const res = await fetch(`${gw.url}/v1/pdf/ocr`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `http://127.0.0.1:${(files.address() as AddressInfo).port}/doc.pdf` }),
  });
  const body = await res.json();
  t.equal(res.status, 200, JSON.stringify(body));
  t.same(
    body.pages.map((p: { source: string }) => p.source),
    ['text_layer', 'ocr']
  );
  t.equal(body.pages[0].text, 'Typed page');
  t.match(body.pages[1].text, /SCANNED\s+PAGE/i);
});
