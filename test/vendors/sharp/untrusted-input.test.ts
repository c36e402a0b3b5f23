import t from 'tap';
import { SharpEngine } from '../../../vendors/sharp/engine.js';
import { processImage } from '../../../vendors/sharp/pipeline.js';
import { readMetadata } from '../../../vendors/sharp/metadata.js';
import { sniffImage } from '../../../core/capabilities/image-sniff.js';
import { solidPng } from '../../fakes/test-images.js';

// Issue 27: an SVG was parsed by librsvg before it was refused (4 x 20 MB took 5.2 GB and 65 s
// each). The signature is read in JavaScript first; what is not an image never reaches libvips,
// and the loaders the gateway does not decode are blocked in the process.

const svg = Buffer.from(
  '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="4000">'
    + '<rect width="4000" height="4000" fill="red"/></svg>'
);
const pdf = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n');
// A big one, past the small lane: its lane is picked before the refusal, and that must not decode either.
const bigSvg = Buffer.concat([svg.subarray(0, -6), Buffer.from(`<!--${'x'.repeat(700 * 1024)}--></svg>`)]);

/** An engine whose every call into sharp (a decoder) is counted. */
async function counted(t: typeof import('tap')['default']) {
  const engine = new SharpEngine(1);
  t.teardown(() => engine.close());
  const real = await engine.sharp();
  const seen = { decodes: 0 };
  const spy = ((...args: Parameters<typeof real>) => {
    seen.decodes++;
    return real(...args);
  }) as typeof real;
  engine.sharp = async () => spy;
  return { engine, real, seen };
}

t.test('SVG, PDF and text are refused 422 by their first bytes: no decoder is called', async (t) => {
  const { engine, seen } = await counted(t);
  const call = { signal: new AbortController().signal };
  for (const [name, data] of Object.entries({ svg, pdf, bigSvg, text: Buffer.from('hello') })) {
    await t.rejects(
      engine.run(call, await engine.laneOf(data), (s) =>
        processImage(engine, s, { data, operations: [{ op: 'resize', width: 10 }] })
      ),
      { kind: 'client_error', status: 422, message: /not a JPEG, PNG, WebP, GIF, AVIF, HEIF or TIFF image/ },
      `process: ${name}`
    );
    await t.rejects(
      engine.run(call, 'small', (s) => readMetadata(engine, s, { data })),
      { kind: 'client_error', status: 422 },
      `metadata: ${name}`
    );
  }
  t.equal(seen.decodes, 0, 'sharp was never called');
  const png = await solidPng(8, 8);
  t.match(await engine.run(call, 'small', (s) => readMetadata(engine, s, { data: png })), {
    width: 8,
    mime: 'image/png',
  });
});

t.test('the loaders the gateway does not decode are blocked in libvips itself', async (t) => {
  const { real } = await counted(t);
  await t.rejects(real(svg).metadata(), /unsupported image format|blocked/i, 'SVG handed to sharp directly');
  t.match(await real(await solidPng(8, 8)).metadata(), { format: 'png' }, 'PNG still decodes');
});

t.test('sniffImage: each decoded format by its signature, nothing else', async (t) => {
  const sharp = (await import('sharp')).default;
  const base = sharp({ create: { width: 4, height: 4, channels: 3, background: '#123456' } });
  for (const [format, want] of [
    ['jpeg', 'jpeg'],
    ['png', 'png'],
    ['webp', 'webp'],
    ['gif', 'gif'],
    ['tiff', 'tiff'],
    ['avif', 'heif'],
  ] as const) {
    t.equal(sniffImage(await base.clone().toFormat(format).toBuffer()), want, format);
  }
  for (const bytes of [svg, pdf, Buffer.from(' <svg/>'), Buffer.alloc(0), Buffer.from('RIFF\0\0\0\0WAVE')]) {
    t.equal(sniffImage(bytes), undefined, JSON.stringify(bytes.subarray(0, 12).toString('latin1')));
  }
});
