import t from 'tap';
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { acceptImageForms, uploadedImage } from '../../../plugins/image/form.js';
import type { Tap } from '../../helpers/tap.js';

// When an upload's reused buffer goes back: after a 200, and after any answer given before the
// image was handed to the service (the schema refusing a field); not after a failure once it was
// handed out, since an engine may still be reading it.

const KiB = 1024;
const Fields = Type.Object({ format: Type.Union([Type.Literal('png'), Type.Literal('jpeg')]) });

async function formApp(t: Tap) {
  const app = Fastify();
  const slabs = acceptImageForms(app, () => Fields, 8192 * KiB);
  app.post('/ok', { schema: { body: Fields } }, async (req) => ({ bytes: uploadedImage(req)!.length }));
  app.post('/fails', { schema: { body: Fields } }, async (req) => {
    uploadedImage(req);
    throw new Error('the engine failed');
  });
  await app.ready();
  t.teardown(() => app.close());
  const send = async (url: string, format: string) => {
    const fd = new FormData();
    fd.append('format', format);
    fd.append('input', new Blob([Buffer.alloc(300 * KiB, 7)]), 'x.png');
    const req = new Request('http://localhost/', { method: 'POST', body: fd });
    const payload = Buffer.from(await req.arrayBuffer());
    return app.inject({ method: 'POST', url, payload, headers: { 'content-type': req.headers.get('content-type')! } });
  };
  return { slabs, send };
}

t.test('a refusal before the image is handed out gives its buffer back; a 200 does too', async (t) => {
  const { slabs, send } = await formApp(t);
  const refused = await send('/ok', 'bogus');
  t.equal(refused.statusCode, 400, refused.body);
  t.equal(slabs.freeBytes, 512 * KiB, 'the buffer of a body the schema refused went back');
  const ok = await send('/ok', 'png');
  t.equal(ok.statusCode, 200, ok.body);
  t.equal(ok.json().bytes, 300 * KiB);
  t.equal(slabs.freeBytes, 512 * KiB, 'the same buffer taken and given back');
});

t.test('a failure after the image was handed out leaves its buffer to the collector', async (t) => {
  const { slabs, send } = await formApp(t);
  const res = await send('/fails', 'png');
  t.equal(res.statusCode, 500);
  t.equal(slabs.freeBytes, 0, 'not reused: an engine may still read it');
});
