import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mp3, pcm, wav } from '../../fakes/openai-audio.js';
import { uploadOf } from '../../fakes/openai-audio.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import { speechApp } from './speech-setup.js';
import type { Tap } from '../../helpers/tap.js';

// database-independent: speech routing and charging; the wallet is core/wallet's tests', on both.

/** A loopback server the caller's audio URLs point at: /speech.wav, /missing (404), /big (200 kB). */
async function audioHost(t: Tap, audio: Buffer) {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    if (req.url === '/speech.wav') return res.writeHead(200, { 'content-type': 'audio/wav' }).end(audio);
    if (req.url === '/big')
      return res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.concat([audio, Buffer.alloc(200_000)]));
    res.writeHead(404).end('no such file');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  t.teardown(() => new Promise<void>((ok) => server.close(() => ok())));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

const speech = wav(pcm(1500));

t.test(
  'asr with base64: every field reaches the vendor; duration, language and segments come back; the cost is exact',
  async (t) => {
    const { app, oa, auth, balance } = await speechApp(t);
    oa.next({ content: 'Guten Tag, wie geht es Ihnen?' });
    const before = await balance();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/asr',
      headers: auth,
      payload: {
        audio: { base64: speech.toString('base64'), mime: 'audio/wav' },
        language: 'de',
        prompt: 'A greeting.',
        model: 'whisper-test',
        vendor: 'oa',
      },
    });
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'ok' : res.body);
    const r = res.json();
    t.equal(r.text, 'Guten Tag, wie geht es Ihnen?');
    t.equal(r.language, 'de', "the vendor's language name as an ISO code");
    t.equal(r.duration_seconds, 1.5);
    t.same(r.segments, [
      { start: 0, end: 0.75, text: ' Guten Tag, wie' },
      { start: 0.75, end: 1.5, text: ' geht es Ihnen?' },
    ]);
    t.match(r.metadata, { vendor: 'oa', model: 'whisper-test', cost_usd: 0.015 });
    t.equal(before - (await balance()), 15_000, '1.5 s at 0.6 USD a minute');
    t.equal(res.headers['x-svc-cost-usd'], '0.015000');
    const sent = oa.requests.at(-1)!;
    t.equal(sent.path, '/v1/audio/transcriptions');
    t.equal(sent.headers.authorization, 'Bearer sk-oa');
    const form = await uploadOf(sent);
    const file = form.get('file') as File;
    t.equal(file.name, 'audio.wav');
    t.equal(file.type, 'audio/wav');
    t.same(Buffer.from(await file.arrayBuffer()), speech, 'the audio arrives byte for byte');
    t.same(Object.fromEntries([...form.entries()].filter(([k]) => k !== 'file')), {
      model: 'whisper-test',
      response_format: 'verbose_json',
      language: 'de',
      prompt: 'A greeting.',
    });
  }
);

t.test(
  'asr without a vendor duration: the gateway measures the audio (WAV header, MP3 bitrate); a data: URL works',
  async (t) => {
    const { app, oa, auth, balance } = await speechApp(t);
    let before = await balance();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/asr',
      headers: auth,
      payload: { audio: { base64: `data:audio/wav;base64,${speech.toString('base64')}` }, model: 'scribe' },
    });
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'ok' : res.body);
    t.match(res.json(), {
      text: 'Hello from fake-openai.',
      language: null,
      duration_seconds: 1.5,
      metadata: { model: 'scribe', cost_usd: 0.015 },
    });
    t.notOk('segments' in res.json());
    t.equal(before - (await balance()), 15_000);
    t.equal((await uploadOf(oa.requests.at(-1)!)).get('response_format'), 'json');

    before = await balance();
    const song = mp3(1000); // 42 frames of 96 bytes at 32 kbit/s: 1.008 s
    const m = await app.inject({
      method: 'POST',
      url: '/v1/ai/asr',
      headers: auth,
      payload: { audio: { base64: song.toString('base64') }, model: 'scribe', language: 'en' },
    });
    t.equal(m.statusCode, 200, m.statusCode === 200 ? 'ok' : m.body);
    t.match(m.json(), { language: 'en', duration_seconds: 1.008 });
    t.equal(before - (await balance()), 10_080);
    t.equal(((await uploadOf(oa.requests.at(-1)!)).get('file') as File).name, 'audio.mp3');
  }
);

t.test('asr with a url: fetched through the egress guard and transcribed', async (t) => {
  const { app, oa, auth, balance } = await speechApp(t);
  const host = await audioHost(t, speech);
  const before = await balance();
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/asr',
    headers: auth,
    payload: { audio: { url: `${host.base}/speech.wav` } },
  });
  t.equal(res.statusCode, 200, res.statusCode === 200 ? 'ok' : res.body);
  t.equal(res.json().duration_seconds, 1.5);
  t.ok(before > (await balance()));
  t.same(Buffer.from(await ((await uploadOf(oa.requests.at(-1)!)).get('file') as File).arrayBuffer()), speech);
  const missing = await app.inject({
    method: 'POST',
    url: '/v1/ai/asr',
    headers: auth,
    payload: { audio: { url: `${host.base}/missing` } },
  });
  t.equal(missing.statusCode, 422);
  t.match(missing.json().error, { code: 'unprocessable', param: 'audio.url', message: /HTTP 404/ });
});

t.test('bad asr input is refused and changes nothing', async (t) => {
  const { app, oa, auth, balance } = await speechApp(t, { limits: { large_body_bytes: 65_536 } });
  const host = await audioHost(t, speech.subarray(0, 20_000));
  const before = await balance();
  const bad: Array<[Record<string, unknown>, number, string, string?]> = [
    [{ audio: { base64: 'not base64 at all!' } }, 400, 'validation_failed', 'audio.base64'],
    [{ audio: { base64: 'data:audio/wav,plain' } }, 400, 'validation_failed', 'audio.base64'],
    [
      { audio: { base64: Buffer.from('just some text, not audio').toString('base64') } },
      400,
      'validation_failed',
      'audio.base64',
    ],
    [{ audio: { base64: '' } }, 400, 'validation_failed'],
    [{ audio: {} }, 400, 'validation_failed'],
    [{ audio: { url: 'ftp://example.com/a.wav' } }, 400, 'validation_failed', 'audio.url'],
    [{ audio: { url: `${host.base}/speech.wav` }, language: 'English' }, 400, 'validation_failed', 'language'],
    [{ audio: { base64: 'A'.repeat(70_000) } }, 413, 'payload_too_large'],
    [{ audio: { url: `${host.base}/big` } }, 413, 'payload_too_large', 'audio.url'],
    [
      { audio: { base64: speech.subarray(0, 1000).toString('base64') }, model: 'say' },
      503,
      'no_vendor_available',
      'model',
    ],
  ];
  for (const [payload, status, code, param] of bad) {
    const res = await app.inject({ method: 'POST', url: '/v1/ai/asr', headers: auth, payload });
    t.equal(res.statusCode, status, JSON.stringify(payload).slice(0, 60));
    t.equal(res.json().error.code, code);
    if (param) t.equal(res.json().error.param, param);
  }
  t.equal(oa.requests.length, 0, 'the vendor was never called');
  t.equal(await balance(), before, 'nothing charged');
});

t.test('a private url is refused when egress does not allow it, before anything is fetched or charged', async (t) => {
  const { app, oa, auth, balance } = await speechApp(t, { egress: { allow_private: false } });
  const host = await audioHost(t, speech);
  const before = await balance();
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/asr',
    headers: auth,
    payload: { audio: { url: `${host.base}/speech.wav` } },
  });
  t.equal(res.statusCode, 400);
  t.match(res.json().error, { code: 'validation_failed', param: 'audio.url', message: /loopback/ });
  t.equal(host.hits(), 0);
  t.equal(oa.requests.length, 0);
  t.equal(await balance(), before);
});

t.test('a failing vendor fails over to the next; the audio is charged once, for the one that answered', async (t) => {
  const second = await openAiFake({ key: 'sk-two' }).start('/v1');
  t.teardown(() => second.close());
  const { app, oa, auth, balance } = await speechApp(t, {
    vendors: [
      { id: 'oa2', use: 'openai', config: { api_key: 'sk-two', base_url: second.url, models: ['whisper-test'] } },
    ],
  });
  oa.next({ status: 503 });
  const before = await balance();
  const res = await app.inject({
    method: 'POST',
    url: '/v1/ai/asr',
    headers: auth,
    payload: { audio: { base64: speech.toString('base64') }, model: 'whisper-test' },
  });
  t.equal(res.statusCode, 200, res.statusCode === 200 ? 'ok' : res.body);
  t.match(res.json().metadata, {
    vendor: 'oa2',
    attempts: [
      { vendor: 'oa', status: 'unavailable' },
      { vendor: 'oa2', status: 'ok' },
    ],
  });
  t.equal(oa.requests.length, 1);
  t.same(
    Buffer.from(await ((await uploadOf(second.requests[0])).get('file') as File).arrayBuffer()),
    speech,
    'the upload is sent again whole'
  );
  t.equal(before - (await balance()), 15_000);
});
