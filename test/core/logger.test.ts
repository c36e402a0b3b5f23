import t from 'tap';
import { createLogger } from '../../core/logger.js';
import { captureLog } from '../helpers/log-lines.js';

t.test('an object with its own msg and a message: one "msg" key, the object\'s kept as detail', async (t) => {
  const { lines, stream } = captureLog();
  const log = createLogger('info', stream);
  log.warn({ code: 'vendor_error', msg: 'upstream said no' }, 'request failed');
  log.child({ req_id: 'req_1' }).warn({ msg: 'from a child' }, 'stream failed');
  log.info({ msg: 'only the object' });
  t.equal(lines.length, 3);
  for (const l of lines) t.equal(l.split('"msg":').length - 1, 1, `one msg key: ${l}`);
  t.match(JSON.parse(lines[0]), { msg: 'request failed', detail: 'upstream said no', code: 'vendor_error' });
  t.match(JSON.parse(lines[1]), { msg: 'stream failed', detail: 'from a child', req_id: 'req_1' });
  t.match(JSON.parse(lines[2]), { msg: 'only the object' });
  t.notOk('detail' in JSON.parse(lines[2]), "no message argument: the object's msg is the message");
});
