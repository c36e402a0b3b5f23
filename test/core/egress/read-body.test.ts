import t from 'tap';
import { readBody } from '../../../core/egress/read-body.js';

// A response body read whole: into one buffer of the declared length as the chunks arrive, or
// gathered when no length is declared; the size cap holds either way.

async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const p of parts) yield Buffer.from(p);
}
const tooLarge = () => new Error('too large');

t.test('a declared length: the chunks copied into one buffer of that length as they come', async (t) => {
  const seen: number[] = [];
  async function* watched(): AsyncIterable<Uint8Array> {
    for (const p of ['abc', 'defg', 'hi']) {
      yield Buffer.from(p);
      seen.push(p.length);
    }
  }
  const body = await readBody(watched(), 9, 100, tooLarge);
  t.equal(body.toString(), 'abcdefghi');
  t.equal(body.buffer.byteLength, 9, 'its own memory, the declared size: not a pooled slice nor a join');
  t.same(seen, [3, 4, 2]);
});

t.test('no declared length (or a declared one over the cap): gathered and joined', async (t) => {
  t.equal((await readBody(chunks('ab', 'cd'), Number.NaN, 100, tooLarge)).toString(), 'abcd');
  await t.rejects(readBody(chunks('abcdef'), 1000, 4, tooLarge), /too large/, 'the cap, not the declared length');
});

t.test('the cap holds while streaming', async (t) => {
  await t.rejects(readBody(chunks('abc', 'def'), Number.NaN, 5, tooLarge), /too large/);
  await t.rejects(readBody(chunks('abc', 'def'), 6, 5, tooLarge), /too large/);
});

t.test('fewer or more bytes than declared: what came, in order', async (t) => {
  t.equal((await readBody(chunks('ab'), 5, 100, tooLarge)).toString(), 'ab');
  t.equal((await readBody(chunks('abc', 'def', 'g'), 4, 100, tooLarge)).toString(), 'abcdefg');
});
