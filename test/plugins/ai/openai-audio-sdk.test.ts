import t from 'tap';
import OpenAI, { toFile } from 'openai';
import { mp3, oggOpus, pcm, wav, MS_PER_CHAR } from '../../fakes/openai-audio.js';
import { uploadOf } from '../../fakes/openai-audio.js';
import { speechApp } from './speech-setup.js';
import { withSdk } from './sdk-setup.js';

// database-independent: the OpenAI audio surface; the wallet is core/wallet's tests', on both.

const sdk = async (t: any, overrides: Record<string, unknown> = {}) => withSdk(t, await speechApp(t, overrides));

t.test(
  'the openai SDK speaks through /v1/openai/audio/speech: audio bytes with their content type, charged like /v1/ai/tts',
  async (t) => {
    const { client, oa, balance } = await sdk(t);
    const before = await balance();
    const res = await client.audio.speech.create({
      model: 'say',
      voice: 'coral',
      input: 'Hello there',
      response_format: 'wav',
      speed: 1.5,
      instructions: 'Slowly.',
    });
    t.equal(res.headers.get('content-type'), 'audio/wav');
    t.equal(res.headers.get('x-svc-cost-usd'), '0.011000');
    t.equal(res.headers.get('x-svc-vendor'), 'oa');
    t.same(Buffer.from(await res.arrayBuffer()), wav(pcm(11 * MS_PER_CHAR)));
    t.equal(before - (await balance()), 11_000);
    t.same(oa.requests.at(-1)!.body, {
      model: 'say',
      input: 'Hello there',
      voice: 'coral',
      response_format: 'wav',
      speed: 1.5,
      instructions: 'Slowly.',
    });

    for (const [format, mime, bytes] of [
      ['mp3', 'audio/mpeg', mp3(2 * MS_PER_CHAR)],
      ['opus', 'audio/opus', oggOpus(2 * MS_PER_CHAR)],
      ['pcm', 'audio/pcm', pcm(2 * MS_PER_CHAR)],
    ] as const) {
      const r = await client.audio.speech.create({
        model: 'auto',
        voice: 'alloy',
        input: 'Hi',
        response_format: format,
      });
      t.equal(r.headers.get('content-type'), mime, format);
      t.same(Buffer.from(await r.arrayBuffer()), bytes);
      t.equal(oa.requests.at(-1)!.body.response_format, format);
    }
  }
);

t.test(
  'the openai SDK transcribes through /v1/openai/audio/transcriptions: json, verbose_json, text, srt, vtt',
  async (t) => {
    const { client, oa, balance } = await sdk(t);
    const audio = wav(pcm(2000));
    const before = await balance();
    const plain = await client.audio.transcriptions.create({
      file: await toFile(audio, 'memo.wav'),
      model: 'whisper-test',
    });
    t.equal(plain.text, 'Hello from fake-openai.');
    t.same((plain as any).usage, { type: 'duration', seconds: 2 });
    t.equal(before - (await balance()), 20_000, '2 s at 0.6 USD a minute');
    const form = await uploadOf(oa.requests.at(-1)!);
    t.equal((form.get('file') as File).name, 'audio.wav');
    t.same(Buffer.from(await (form.get('file') as File).arrayBuffer()), audio);
    t.equal(form.get('model'), 'whisper-test');

    oa.next({ content: 'Bonjour tout le monde' });
    const verbose = await client.audio.transcriptions.create({
      file: await toFile(audio, 'memo.wav'),
      model: 'whisper-test',
      response_format: 'verbose_json',
      language: 'fr',
      prompt: 'Salut',
    });
    t.match(verbose, { task: 'transcribe', language: 'french', duration: 2, text: 'Bonjour tout le monde' });
    t.same(
      verbose.segments!.map((s) => [s.id, s.start, s.end, s.text]),
      [
        [0, 0, 1, ' Bonjour tout'],
        [1, 1, 2, ' le monde'],
      ]
    );
    const sent = await uploadOf(oa.requests.at(-1)!);
    t.equal(sent.get('language'), 'fr');
    t.equal(sent.get('prompt'), 'Salut');

    const text = await client.audio.transcriptions.create({
      file: await toFile(audio, 'memo.wav'),
      model: 'scribe',
      response_format: 'text',
    });
    t.equal(text, 'Hello from fake-openai.\n');
    oa.next({ content: 'one two three four' });
    const srt = await client.audio.transcriptions.create({
      file: await toFile(audio, 'memo.wav'),
      model: 'whisper-test',
      response_format: 'srt',
    });
    t.equal(srt, '1\n00:00:00,000 --> 00:00:01,000\none two\n\n2\n00:00:01,000 --> 00:00:02,000\nthree four\n');
    const vtt = await client.audio.transcriptions.create({
      file: await toFile(audio, 'memo.wav'),
      model: 'scribe',
      response_format: 'vtt',
    });
    t.equal(vtt, 'WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHello from fake-openai.\n');
  }
);

t.test('transcription errors in OpenAI shape; nothing charged', async (t) => {
  const { client, base, key, oa, balance } = await sdk(t, { limits: { large_body_bytes: 65_536 } });
  const before = await balance();
  const notAudio = await client.audio.transcriptions
    .create({ file: await toFile(Buffer.from('hello'), 'notes.txt'), model: 'whisper-test' })
    .catch((e) => e);
  t.ok(notAudio instanceof OpenAI.BadRequestError);
  t.equal(notAudio.param, 'file');
  const big = await client.audio.transcriptions
    .create({
      file: await toFile(Buffer.concat([wav(pcm(10)), Buffer.alloc(70_000)]), 'big.wav'),
      model: 'whisper-test',
    })
    .catch((e) => e);
  t.equal(big.status, 413);
  t.equal(big.code, 'payload_too_large');
  const noModel = await fetch(`${base}/v1/openai/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: (() => {
      const f = new FormData();
      f.append('file', new Blob([new Uint8Array(wav(pcm(10)))]), 'a.wav');
      return f;
    })(),
  });
  t.equal(noModel.status, 400);
  t.match(await noModel.json(), {
    error: { type: 'invalid_request_error', param: 'model', code: 'validation_failed' },
  });
  const json = await fetch(`${base}/v1/openai/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{"model":"whisper-test"}',
  });
  t.equal(json.status, 415);
  const format = await client.audio.transcriptions
    .create({
      file: await toFile(wav(pcm(10)), 'a.wav'),
      model: 'whisper-test',
      response_format: 'diarized_json' as any,
    })
    .catch((e) => e);
  t.equal(format.status, 400);
  t.equal(format.param, 'response_format');
  const speech = await client.audio.speech.create({ model: 'say', voice: 'alloy', input: '' }).catch((e) => e);
  t.ok(speech instanceof OpenAI.BadRequestError);
  t.equal(oa.requests.length, 0);
  t.equal(await balance(), before);
});

t.test("a malformed or many-file multipart body is the caller's error, not a 500", async (t) => {
  const { app, auth, oa } = await speechApp(t);
  const part = (name: string, value: string, file?: string) =>
    `--x\r\nContent-Disposition: form-data; name="${name}"${file ? `; filename="${file}"` : ''}\r\n\r\n${value}\r\n`;
  const cases: Array<[string, number, string]> = [
    ['garbage', 400, 'invalid_request'],
    [
      `${part('model', 'whisper-test')}--x\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF`,
      400,
      'invalid_request',
    ],
    [`${part('file', 'abc', 'a.wav')}${part('file', 'abc', 'b.wav')}--x--\r\n`, 413, 'payload_too_large'],
  ];
  for (const [payload, status, code] of cases) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/openai/audio/transcriptions',
      headers: { ...auth, 'content-type': 'multipart/form-data; boundary=x' },
      payload,
    });
    t.equal(res.statusCode, status);
    t.equal(res.json().error.code, code);
  }
  t.equal(oa.requests.length, 0);
});
