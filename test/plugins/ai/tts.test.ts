import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { mp3, oggOpus, pcm, wav, MS_PER_CHAR } from '../../fakes/openai-audio.js';
import { download, resultCount, speechApp } from './speech-setup.js';

// database-independent: speech routing and charging; idempotency and the wallet are core's tests', on both.

t.test(
  'tts round trip: every field reaches the vendor, the audio URL serves its bytes, the cost is exact',
  async (t) => {
    const { app, oa, auth, balance } = await speechApp(t);
    const before = await balance();
    const input = 'Hello, wörld!';
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/tts',
      headers: auth,
      payload: {
        input,
        voice: 'nova',
        format: 'wav',
        speed: 1.25,
        instructions: 'Cheerful.',
        model: 'say',
        vendor: 'oa',
        include_b64: true,
      },
    });
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'ok' : res.body);
    const r = res.json();
    const expected = wav(pcm(13 * MS_PER_CHAR));
    t.equal(r.format, 'wav');
    t.equal(r.mime, 'audio/wav');
    t.equal(r.bytes, expected.length);
    t.equal(r.b64, expected.toString('base64'));
    t.same(r.usage, { characters: 13 }, 'characters, not bytes');
    t.match(r.metadata, { vendor: 'oa', model: 'say', cost_usd: 0.013, cached: false, byok: false });
    t.ok(Date.parse(r.url_expires_at) > Date.now() + 86_400_000);
    t.equal(res.headers['x-svc-cost-usd'], '0.013000');
    t.equal(res.headers['x-svc-vendor'], 'oa');
    t.equal(before - (await balance()), 13_000, '1,000 micro-USD a character');
    const sent = oa.requests.at(-1)!;
    t.equal(sent.path, '/v1/audio/speech');
    t.equal(sent.headers.authorization, 'Bearer sk-oa');
    t.same(sent.body, {
      model: 'say',
      input,
      voice: 'nova',
      response_format: 'wav',
      speed: 1.25,
      instructions: 'Cheerful.',
    });
    const file = await download(app, r.audio_url);
    t.equal(file.statusCode, 200);
    t.equal(file.headers['content-type'], 'audio/wav');
    t.match(file.headers['content-disposition'], /filename="speech\.wav"/);
    t.same(file.rawPayload, expected, "the URL serves the vendor's audio");
  }
);

t.test('tts formats: mp3 by default with the default voice, ogg is Opus in Ogg, pcm is raw samples', async (t) => {
  const { app, oa, auth } = await speechApp(t);
  const cases: Array<[string | undefined, string, string, Buffer]> = [
    [undefined, 'mp3', 'audio/mpeg', mp3(2 * MS_PER_CHAR)],
    ['ogg', 'opus', 'audio/ogg', oggOpus(2 * MS_PER_CHAR)],
    ['pcm', 'pcm', 'audio/pcm', pcm(2 * MS_PER_CHAR)],
  ];
  for (const [format, wire, mime, bytes] of cases) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/ai/tts',
      headers: auth,
      payload: { input: 'Hi', ...(format ? { format } : {}) },
    });
    t.equal(res.statusCode, 200, res.statusCode === 200 ? (format ?? 'mp3') : res.body);
    t.equal(res.json().format, format ?? 'mp3');
    t.equal(res.json().mime, mime);
    t.notOk('b64' in res.json(), 'no inline audio unless asked');
    t.match(oa.requests.at(-1)!.body, { model: 'say', voice: 'alloy', response_format: wire });
    const file = await download(app, res.json().audio_url);
    t.equal(file.headers['content-type'], mime);
    t.same(file.rawPayload, bytes);
  }
  t.equal(bytesOf(oggOpus(20)).slice(0, 4), 'OggS');
});

function bytesOf(b: Buffer) {
  return b.toString('latin1');
}

t.test('bad tts input is refused and changes nothing', async (t) => {
  const { app, oa, auth, balance } = await speechApp(t);
  const before = await balance();
  const bad: Array<[Record<string, unknown>, number, string, string]> = [
    [{ input: '' }, 400, 'validation_failed', 'input'],
    [{ input: '   ' }, 400, 'validation_failed', 'input'],
    [{ input: 'x'.repeat(4097) }, 400, 'validation_failed', 'input'],
    [{ input: 'hi', format: 'flac' }, 400, 'validation_failed', 'format'],
    [{ input: 'hi', speed: 9 }, 400, 'validation_failed', 'speed'],
    [{ input: 'hi', colour: 'blue' }, 400, 'validation_failed', 'colour'],
    [{ input: 'hi', model: 'whisper-test' }, 503, 'no_vendor_available', 'model'],
    [{ input: 'hi', vendor: 'nobody' }, 503, 'no_vendor_available', 'vendor'],
  ];
  for (const [payload, status, code, param] of bad) {
    const res = await app.inject({ method: 'POST', url: '/v1/ai/tts', headers: auth, payload });
    t.equal(res.statusCode, status, JSON.stringify(payload).slice(0, 60));
    t.equal(res.json().error.code, code);
    t.equal(res.json().error.param, param);
  }
  t.equal(oa.requests.length, 0, 'the vendor was never called');
  const voice = await app.inject({
    method: 'POST',
    url: '/v1/ai/tts',
    headers: auth,
    payload: { input: 'hi', voice: 'robot' },
  });
  t.equal(voice.statusCode, 422, 'a voice the vendor rejects');
  t.equal(voice.json().error.code, 'unprocessable');
  t.match(voice.json().error.message, /voice/);
  t.equal(await balance(), before, 'nothing charged');
  t.equal(await resultCount(app), 0, 'nothing saved');
});

t.test('a vendor failure fails over or is 502 with nothing charged', async (t) => {
  const { app, oa, auth, balance } = await speechApp(t);
  const before = await balance();
  oa.next({ status: 500 });
  const res = await app.inject({ method: 'POST', url: '/v1/ai/tts', headers: auth, payload: { input: 'hi' } });
  t.equal(res.statusCode, 502);
  t.equal(res.json().error.code, 'vendor_error');
  t.match(res.json().error.details.attempts, [{ vendor: 'oa', model: 'say', status: 'unavailable' }]);
  t.equal(await balance(), before);
});

t.test('with no speech vendor: 503 no_vendor_available for tts and asr, nothing charged', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  for (const [url, payload] of [
    ['/v1/ai/tts', { input: 'hello' }],
    ['/v1/ai/asr', { audio: { base64: wav(pcm(100)).toString('base64') } }],
  ] as const) {
    const res = await app.inject({ method: 'POST', url, headers: a.auth, payload });
    t.equal(res.statusCode, 503, url);
    t.equal(res.json().error.code, 'no_vendor_available');
    t.match(res.json().error.message, /vendors:|POST \/v1\/byok/);
  }
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 5);
  const disc = (await app.inject({ method: 'GET', url: '/v1/discovery' })).json();
  const tts = disc.items.find((i: { path: string }) => i.path === '/v1/ai/tts');
  t.match(tts, { id: 'ai.tts', available: false });
});

t.test(
  "speech with the caller's own key (BYOK): the key reaches the vendor, only the platform fee is charged",
  async (t) => {
    const { app, oa, auth, balance } = await speechApp(
      t,
      { vendors: [], plugins: { byok: { platform_fee_usd: 0.000005 } } },
      { apiKey: '' }
    );
    const without = await app.inject({ method: 'POST', url: '/v1/ai/tts', headers: auth, payload: { input: 'Hi' } });
    t.equal(without.statusCode, 503, 'a key-less instance serves only callers with a key');
    const k = await app.inject({
      method: 'POST',
      url: '/v1/byok',
      headers: auth,
      payload: { provider: 'openai', alias: 'mine', credentials: { api_key: 'sk-oa' } },
    });
    t.equal(k.statusCode, 200, k.body);
    const before = await balance();
    const res = await app.inject({ method: 'POST', url: '/v1/ai/tts', headers: auth, payload: { input: 'Hi there' } });
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'ok' : res.body);
    t.match(res.json().metadata, { vendor: 'oa', byok: true, cost_usd: 0.000005 });
    t.equal(oa.requests.at(-1)!.headers.authorization, 'Bearer sk-oa');
    const asr = await app.inject({
      method: 'POST',
      url: '/v1/ai/asr',
      headers: auth,
      payload: { audio: { base64: wav(pcm(1000)).toString('base64') } },
    });
    t.equal(asr.statusCode, 200, asr.statusCode === 200 ? 'ok' : asr.body);
    t.match(asr.json().metadata, { byok: true, cost_usd: 0.000005 });
    t.equal(before - (await balance()), 10);
  }
);

t.test('an idempotency key replays the tts answer without a second vendor call or charge', async (t) => {
  const { app, oa, auth, balance } = await speechApp(t);
  const before = await balance();
  const payload = { input: 'Once only', idempotency_key: 'tts-1' };
  const first = await app.inject({ method: 'POST', url: '/v1/ai/tts', headers: auth, payload });
  const again = await app.inject({ method: 'POST', url: '/v1/ai/tts', headers: auth, payload });
  t.equal(again.statusCode, 200);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.json().audio_url, first.json().audio_url);
  t.equal(oa.requests.length, 1);
  t.equal(before - (await balance()), 9_000);
  t.equal(await resultCount(app), 1);
});
