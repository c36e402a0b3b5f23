// database-independent: a pure function
import t from 'tap';
import { smsSegments } from '../../../core/capabilities/sms-segments.js';

// Segments as carriers bill them: GSM-7 160 / 153 with the extension table at two septets,
// UCS-2 70 / 67 in UTF-16 units as soon as one character needs it, and no part split inside
// an escape pair or a surrogate pair.

t.test('GSM-7 single and concatenated', async (t) => {
  t.same(smsSegments(''), { encoding: 'GSM-7', units: 0, segments: 1 });
  t.same(smsSegments('a'.repeat(160)), { encoding: 'GSM-7', units: 160, segments: 1 });
  t.same(smsSegments('a'.repeat(161)), { encoding: 'GSM-7', units: 161, segments: 2 });
  t.same(smsSegments('a'.repeat(306)).segments, 2);
  t.same(smsSegments('a'.repeat(307)).segments, 3);
  t.same(smsSegments('a'.repeat(1530)).segments, 10);
  // Characters of the basic table beyond ASCII stay GSM-7.
  t.same(smsSegments('Ünicode? no: £¥èéùìòÇØøÅåΔΦΓΛΩΠΨΣΘΞÆæßÉ¤¡§¿äöñüà').encoding, 'GSM-7');
  t.same(smsSegments('line\nbreak\r').units, 11);
  // ï is not in the table: one such letter makes the message UCS-2.
  t.same(smsSegments('naïve').encoding, 'UCS-2');
});

t.test('the extension table costs two septets', async (t) => {
  t.same(smsSegments('€'.repeat(80)), { encoding: 'GSM-7', units: 160, segments: 1 });
  t.same(smsSegments('€'.repeat(81)), { encoding: 'GSM-7', units: 162, segments: 2 });
  t.same(smsSegments('^{}\\[~]|\f').units, 18);
  // 152 septets then an escape pair: the pair does not fit in the first part's last septet.
  const body = `${'a'.repeat(152)}€${'a'.repeat(152)}`;
  t.same(smsSegments(body), { encoding: 'GSM-7', units: 306, segments: 3 });
  t.same(smsSegments(`${'a'.repeat(151)}€${'a'.repeat(153)}`).segments, 2);
});

t.test('one character outside GSM-7 makes the whole message UCS-2', async (t) => {
  t.same(smsSegments(`${'a'.repeat(69)}ç`), { encoding: 'UCS-2', units: 70, segments: 1 });
  t.same(smsSegments(`${'a'.repeat(70)}ç`), { encoding: 'UCS-2', units: 71, segments: 2 });
  t.same(smsSegments('ç'.repeat(134)).segments, 2);
  t.same(smsSegments('ç'.repeat(135)).segments, 3);
  // A GSM extension character counts one unit in UCS-2, not two.
  t.same(smsSegments('€ж').units, 2);
  t.same(smsSegments('你好').encoding, 'UCS-2');
});

t.test('surrogate pairs count two units and are never split', async (t) => {
  t.same(smsSegments('😀'), { encoding: 'UCS-2', units: 2, segments: 1 });
  t.same(smsSegments('😀'.repeat(35)), { encoding: 'UCS-2', units: 70, segments: 1 });
  t.same(smsSegments('😀'.repeat(36)).segments, 2);
  // 66 units then a pair: the pair moves to the second part whole.
  t.same(smsSegments(`${'ж'.repeat(66)}😀${'ж'.repeat(66)}`), { encoding: 'UCS-2', units: 134, segments: 3 });
  t.same(smsSegments(`${'ж'.repeat(65)}😀${'ж'.repeat(67)}`).segments, 2);
});
