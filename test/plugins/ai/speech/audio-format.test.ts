import t from 'tap';
import { audioSeconds, estimateSeconds, sniffAudio } from '../../../../plugins/ai/speech/audio-format.js';
import { mp3, oggOpus, oggPage, pcm, wav } from '../../../fakes/openai-audio.js';

const kind = (b: Buffer) => sniffAudio(b)!;

t.test('containers are recognised by their bytes', async (t) => {
  t.same(sniffAudio(wav(pcm(10))), { ext: 'wav', mime: 'audio/wav' });
  t.same(sniffAudio(mp3(24)), { ext: 'mp3', mime: 'audio/mpeg' });
  t.same(sniffAudio(oggOpus(20)), { ext: 'ogg', mime: 'audio/ogg' });
  t.same(sniffAudio(Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(40)])), { ext: 'flac', mime: 'audio/flac' });
  t.same(sniffAudio(Buffer.concat([Buffer.from([0, 0, 0, 32]), Buffer.from('ftypM4A '), Buffer.alloc(20)])), {
    ext: 'm4a',
    mime: 'audio/mp4',
  });
  t.same(sniffAudio(Buffer.concat([Buffer.from([0, 0, 0, 32]), Buffer.from('ftypisom'), Buffer.alloc(20)])), {
    ext: 'mp4',
    mime: 'video/mp4',
  });
  t.same(sniffAudio(Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), Buffer.alloc(20)])), {
    ext: 'webm',
    mime: 'audio/webm',
  });
  t.same(sniffAudio(Buffer.concat([Buffer.from('ID3'), Buffer.alloc(20)])), { ext: 'mp3', mime: 'audio/mpeg' });
  t.equal(sniffAudio(Buffer.from('just some text, not audio')), undefined);
  t.equal(
    sniffAudio(Buffer.from([0xff, 0xf1, 0x50, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
    undefined,
    'ADTS AAC is not MPEG Layer III'
  );
  t.equal(sniffAudio(Buffer.from('RIFF')), undefined, 'too short to say');
});

t.test('durations: WAV header, FLAC STREAMINFO, Ogg granules, MP3 Xing and bitrate', async (t) => {
  t.equal(audioSeconds(wav(pcm(1500)), kind(wav(pcm(1500)))), 1.5);
  const streamed = wav(pcm(500));
  streamed.writeUInt32LE(0xffffffff, 40);
  t.equal(audioSeconds(streamed, kind(streamed)), 0.5, 'a streamed WAV counts the bytes present');

  const flac = Buffer.alloc(42);
  flac.write('fLaC', 0, 'latin1');
  flac.set([0x80, 0, 0, 34], 4);
  flac.writeBigUInt64BE((16000n << 44n) | (0n << 41n) | (15n << 36n) | 40000n, 18);
  t.equal(audioSeconds(flac, kind(flac)), 2.5);

  t.equal(audioSeconds(oggOpus(1000), kind(oggOpus(1000))), 1, 'Opus: 48 kHz granules less the pre-skip');
  const ident = Buffer.alloc(30);
  ident.write('\x01vorbis', 0, 'latin1');
  ident[11] = 1;
  ident.writeUInt32LE(22050, 12);
  const vorbis = Buffer.concat([
    oggPage(ident, 0, 0n, 2),
    oggPage(Buffer.alloc(10), 1, 0n, 0),
    oggPage(Buffer.alloc(10), 2, 66150n, 4),
  ]);
  t.equal(audioSeconds(vorbis, kind(vorbis)), 3);

  t.equal(audioSeconds(mp3(1000), kind(mp3(1000))), 1.008, 'CBR: bytes over the bitrate');
  const xing = Buffer.alloc(417);
  xing.set([0xff, 0xfb, 0x90, 0xc4]); // MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, mono
  xing.write('Xing', 4 + 17, 'latin1');
  xing.writeUInt32BE(1, 25);
  xing.writeUInt32BE(441, 29);
  t.equal(audioSeconds(xing, kind(xing)), (441 * 1152) / 44100, 'VBR: the Xing frame count');
  const tagged = Buffer.concat([Buffer.from('ID3'), Buffer.from([4, 0, 0, 0, 0, 0, 10]), Buffer.alloc(10), mp3(1000)]);
  t.equal(audioSeconds(tagged, kind(tagged)), 1.008, 'an ID3 tag is skipped');
});

t.test('containers without a cheap duration are bounded at 4,000 bytes a second', async (t) => {
  const webm = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), Buffer.alloc(7996)]);
  t.equal(audioSeconds(webm, kind(webm)), undefined);
  t.equal(estimateSeconds(webm, kind(webm)), 2);
  const broken = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE'), Buffer.alloc(3988)]);
  t.equal(estimateSeconds(broken, kind(broken)), 1, 'a WAV without fmt or data falls back to the bound');
});
