import t from 'tap';
import { ApiError, apiError, fieldError, isApiError } from '../../core/errors.js';

// The CLI runs a bundle with its own copy of core/errors while a third-party plugin imports
// `svc-gateway` from dist/: an ApiError made by either copy must be one to the other.

t.test('an ApiError from another copy of the module is an ApiError here, and the other way round', async (t) => {
  const copyUrl = `${new URL('../../core/errors.js', import.meta.url).href}?second-copy`;
  const other = (await import(copyUrl)) as typeof import('../../core/errors.js');
  t.not(other.ApiError, ApiError, 'two module instances, two classes');

  const foreign = other.apiError('not_found', 'No such thing.');
  t.ok(foreign instanceof ApiError, 'instanceof across copies');
  t.ok(isApiError(foreign));
  t.match(foreign, { code: 'not_found', status: 404, message: 'No such thing.' });
  t.ok(apiError('conflict') instanceof other.ApiError, 'and from this copy to the other');
});

t.test('nothing else passes for an ApiError', async (t) => {
  const lookalike = Object.assign(new Error('x'), { name: 'ApiError', code: 'not_found', status: 404 });
  for (const v of [lookalike, { code: 'not_found', status: 404 }, null, undefined, 'ApiError', 404])
    t.notOk(v instanceof ApiError, `not ${String(v)}`);
  t.notOk(isApiError(lookalike));
  t.ok(new ApiError('invalid_request') instanceof Error, 'still an Error');
});

t.test('the mark is a registered symbol, the same for every copy', async (t) => {
  const e = apiError('validation_failed', 'width must be integer.', { param: 'width' });
  t.ok(Object.getOwnPropertySymbols(e).includes(Symbol.for('svc-gateway.ApiError')));
  t.notMatch(JSON.stringify(e), /svc-gateway/, 'not in what JSON.stringify writes');
});

t.test('fieldError is a validation_failed naming one field, shaped like the schema validator', async (t) => {
  const e = fieldError('width', 'must be an integer');
  t.match(e, { code: 'validation_failed', status: 400, param: 'width', message: 'width must be an integer.' });
  t.same(e.details, { errors: [{ param: 'width', message: 'must be an integer' }] });
  const told = fieldError('url', 'resolves to a loopback address', 'url points at 127.0.0.1, which is refused.');
  t.equal(told.message, 'url points at 127.0.0.1, which is refused.', 'a message of its own when given');
  t.same(told.details, { errors: [{ param: 'url', message: 'resolves to a loopback address' }] });
});
