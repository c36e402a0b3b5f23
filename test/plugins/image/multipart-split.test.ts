import t from 'tap';
import { boundaryOf, splitMultipart } from '../../../plugins/image/multipart.js';

// The multipart/form-data splitter on bodies a browser or curl could send, and broken ones.

const CT = 'multipart/form-data; boundary=b0und';
const body = (...lines: Array<string | Buffer>) =>
  Buffer.concat(lines.map((l) => (typeof l === 'string' ? Buffer.from(l, 'latin1') : l)));

t.test('parts in order, file bytes exact (delimiter-like bytes inside kept), a preamble skipped', async (t) => {
  const image = Buffer.from('\xff\xd8\r\n--b0un\r\n--x\r\n\r\n--b0undy\xff\xd9', 'latin1');
  const parts = splitMultipart(
    body(
      'a preamble to ignore\r\n',
      '--b0und\r\nContent-Disposition: form-data; name="width"\r\n\r\n400\r\n',
      '--b0und  \r\ncontent-disposition: form-data; name="input"; filename="ph\\"o.jpg"\r\n',
      'Content-Type: image/jpeg\r\n\r\n',
      image,
      '\r\n--b0und--\r\nan epilogue'
    ),
    CT
  );
  t.equal(parts.length, 2);
  t.match(parts[0], { name: 'width' });
  t.equal(parts[0].filename, undefined);
  t.equal(parts[0].data.toString(), '400');
  t.match(parts[1], { name: 'input', filename: 'ph"o.jpg', mime: 'image/jpeg' });
  t.ok(parts[1].data.equals(image), 'the bytes exactly, with the near-delimiters inside them');
});

t.test('a quoted boundary, an empty value, UTF-8 names', async (t) => {
  t.equal(boundaryOf('multipart/form-data; boundary="a b:c"'), 'a b:c');
  const parts = splitMultipart(
    body('--a b:c\r\nContent-Disposition: form-data; name="caf\xc3\xa9"\r\n\r\n\r\n--a b:c--\r\n'),
    'multipart/form-data; boundary="a b:c"'
  );
  t.same(
    parts.map((p) => [p.name, p.data.length]),
    [['café', 0]]
  );
});

t.test('a line that only starts like the boundary is not one', async (t) => {
  t.same(splitMultipart(body('--b0und junk\r\n\r\n--b0und--'), CT), [], 'the first delimiter is the close');
});

t.test('malformed bodies are 400 invalid_request', async (t) => {
  const cases: Array<[string, Buffer, string?]> = [
    ['no boundary parameter', body('--b0und--'), 'multipart/form-data'],
    ['no delimiter', body('hello')],
    ['no closing delimiter', body('--b0und\r\nContent-Disposition: form-data; name="a"\r\n\r\nxyz')],
    ['headers never end', body('--b0und\r\nContent-Disposition: form-data; name="a"\r\n')],
    ['no disposition', body('--b0und\r\nContent-Type: text/plain\r\n\r\nx\r\n--b0und--')],
    ['no name', body('--b0und\r\nContent-Disposition: form-data; filename="a"\r\n\r\nx\r\n--b0und--')],
  ];
  for (const [name, b, ct] of cases) {
    t.throws(() => splitMultipart(b, ct ?? CT), { code: 'invalid_request', status: 400 }, name);
  }
});
