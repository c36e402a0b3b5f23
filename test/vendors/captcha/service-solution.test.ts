import t from 'tap';
import { createChallenge, solveChallenge, verifySolution } from 'altcha-lib/v1';
import { decodeAltcha } from '../../../core/kit/vendor.js';
import { solutionSigned } from '../../../vendors/service/verify-solution.js';

// The service vendor checks solutions with node:crypto instead of altcha-lib's WebCrypto: both must
// agree on every solution, good or altered, or a widget's valid answer would be refused (or worse).

const KEY = 'a3f1'.repeat(16);

async function solvedPayload(hmacKey = KEY) {
  const c = await createChallenge({ hmacKey, maxnumber: 1000, params: { sk: 'sk_test', ttl: '300' } });
  const s = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  if (!s) throw new Error('no solution');
  const token = Buffer.from(JSON.stringify({ ...c, number: s.number })).toString('base64');
  return decodeAltcha(token)!;
}

t.test('agrees with altcha-lib on good and altered solutions', async (t) => {
  const good = await solvedPayload();
  const other = await solvedPayload('another key');
  const cases = {
    good,
    'another key': other,
    'number + 1': { ...good, number: good.number + 1 },
    'salt changed': { ...good, salt: good.salt.replace('ttl=300', 'ttl=301') },
    'challenge of another': { ...good, challenge: other.challenge },
    'signature of another': { ...good, signature: other.signature },
    'signature upper-case': { ...good, signature: good.signature.toUpperCase() },
    'signature cut': { ...good, signature: good.signature.slice(0, 62) },
    'signature padded': { ...good, signature: `${good.signature}00` },
  };
  for (const [name, p] of Object.entries(cases)) {
    const theirs = await verifySolution(p, KEY, false);
    t.equal(solutionSigned(p, KEY), theirs, `${name}: ${theirs}`);
  }
  t.ok(solutionSigned(good, KEY), 'a good one verifies');
  t.notOk(solutionSigned(other, KEY), 'one signed with another key does not');
});
