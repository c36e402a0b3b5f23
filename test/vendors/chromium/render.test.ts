// long-pole: starts Chromium; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import { PDFDocument } from 'pdf-lib';
import { directFetcher, instance, render, serve, systemTtf } from '../../helpers/chromium-render.js';

// Real documents out of the system Chromium: page count and size read back with pdf-lib, a
// web font from a loopback server, scripts off unless asked. The egress rules are in egress.test.ts.

// One browser for the file, launched by the first render: a launch costs seconds of CPU on a
// loaded machine, and each test renders documents of its own on it (as jobs share the pool's).
const browser = instance(t);

const ROWS = Array.from({ length: 120 }, (_, i) => `<tr><td>${i + 1}</td><td>item ${i + 1}</td><td>${i * 3}</td></tr>`);

function tablePage(fontUrl?: string): string {
  const face = fontUrl ? `@font-face { font-family: 'Bench Sans'; src: url('${fontUrl}') format('truetype'); }` : '';
  return `<!doctype html><html><head><style>${face}
    body { font-family: ${fontUrl ? "'Bench Sans'" : 'sans-serif'}; font-size: 14px; }
    td { border: 1px solid #999; padding: 4px; }
  </style></head><body><h1>Invoice</h1><table>${ROWS.join('')}</table></body></html>`;
}

async function mediaBox(data: Buffer): Promise<{ width: number; height: number; pages: number }> {
  const doc = await PDFDocument.load(data);
  const { width, height } = doc.getPage(0).getMediaBox();
  // Chromium sizes pages in whole CSS pixels (A4 is 595.92 × 842.88 pt): points, to the nearest 2.
  const near = (pt: number) => Math.round(pt / 2) * 2;
  return { width: near(width), height: near(height), pages: doc.getPageCount() };
}

function fontNames(data: Buffer): string[] {
  // Embedded font names sit in the PDF's font descriptors: /FontName /ABCDEF+Name.
  return [...data.toString('latin1').matchAll(/\/FontName\s*\/([A-Z]{6}\+)?([^\s/>]+)/g)].map((m) => m[2]);
}

t.test('an HTML table with a web font: several A4 pages, the font embedded, the font served once', async (t) => {
  const font = systemTtf();
  const ttf = font?.data;
  const inst = await browser;
  const srv = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'font/ttf' });
    res.end(ttf);
  });
  const out = await render(inst, {
    html: tablePage(ttf ? `${srv.base}/font.ttf` : undefined),
    fetchResource: directFetcher(),
  });
  t.equal(out.data.subarray(0, 5).toString(), '%PDF-');
  const box = await mediaBox(out.data);
  t.equal(box.pages, out.pages, "the page count returned is the document's");
  t.ok(out.pages >= 3, `120 rows run over several pages (${out.pages})`);
  t.same([box.width, box.height], [596, 842], 'A4 portrait');
  if (!ttf) {
    t.skip('no TTF on this machine: the web-font check is skipped');
    return;
  }
  t.same(srv.hits, ['/font.ttf'], 'the font was fetched through fetchResource');
  t.ok(
    fontNames(out.data).some((n) => n.startsWith(font!.name)),
    `the web font is embedded (${fontNames(out.data).join(', ')})`
  );
});

t.test('format and orientation set the MediaBox: Letter, Legal, A4 landscape', async (t) => {
  const inst = await browser;
  const html = '<p>one page</p>';
  const fetchResource = directFetcher();
  const letter = await render(inst, { html, format: 'Letter', fetchResource });
  t.match(await mediaBox(letter.data), { width: 612, height: 792, pages: 1 });
  const legal = await render(inst, { html, format: 'Legal', fetchResource });
  t.match(await mediaBox(legal.data), { width: 612, height: 1008 });
  const landscape = await render(inst, { html, orientation: 'landscape', fetchResource });
  t.match(await mediaBox(landscape.data), { width: 842, height: 596 });
});

t.test('a url document is fetched through fetchResource and rendered; a 404 url fails the render', async (t) => {
  const inst = await browser;
  const srv = await serve(t, (req, res) => {
    if (req.url === '/doc') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<h1>From a URL</h1><img src="/pixel.png">');
    }
    res.writeHead(404).end();
  });
  const out = await render(inst, { url: `${srv.base}/doc`, fetchResource: directFetcher() });
  t.equal(out.pages, 1);
  t.same(srv.hits, ['/doc', '/pixel.png'], 'the page and its image, each fetched once, in order');
  await t.rejects(render(inst, { url: `${srv.base}/missing`, fetchResource: directFetcher() }), {
    name: 'VendorFailure',
    kind: 'client_error',
    message: /404/,
  });
});

t.test('scripts are off by default and run when asked', async (t) => {
  const inst = await browser;
  // With scripts on, the page is replaced by 200 paragraphs: several pages instead of one.
  const html = '<p id="p">static</p><script>document.body.innerHTML = "<p>written</p>".repeat(200)</script>';
  const off = await render(inst, { html, fetchResource: directFetcher() });
  t.equal(off.pages, 1, 'the script did not run: one page');
  const on = await render(inst, { html, javascript: true, fetchResource: directFetcher() });
  t.ok(on.pages > 1, `the script ran: ${on.pages} pages`);
});

t.test('an html page has no network base: its relative URLs reach nothing', async (t) => {
  const inst = await browser;
  const seen: string[] = [];
  const out = await render(inst, {
    html: '<img src="/relative.png"><link rel="stylesheet" href="style.css"><p>x</p>',
    fetchResource: async (url) => {
      seen.push(url);
      throw new Error('not expected');
    },
  });
  t.equal(out.pages, 1);
  t.same(seen, [], 'fetchResource was never asked for a relative URL');
});
