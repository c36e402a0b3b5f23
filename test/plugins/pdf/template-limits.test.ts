import t from 'tap';
import { runningTasks } from '../../../core/isolation/worker-pool.js';
import { until } from '../../helpers/wait.js';
import { pdfApp, STAND_INS } from './setup.js';

// database-independent: template depth and the fill's worker; the template rows are templates.test.ts's.

// Templates bounded (issue 27): sections nested too deep are refused at creation, and filling a
// template runs in a worker thread with a deadline, so a template whose sections multiply over
// long lists neither holds the event loop nor runs for ever.

const nested = (depth: number, inner = '{{x}}') => `${'{{#l}}'.repeat(depth)}${inner}${'{{/l}}'.repeat(depth)}`;

t.test('sections nested past max_template_depth are 413 at creation; 5,000 levels too, not 500', async (t) => {
  const { post } = await pdfApp(t, { ...STAND_INS, plugins: { pdf: { max_template_depth: 3 } } });
  const ok = await post('/v1/pdf/templates', { name: 'three', html: nested(3) });
  t.equal(ok.statusCode, 200, ok.body);
  for (const depth of [4, 5000]) {
    const res = await post('/v1/pdf/templates', { name: 'deep', html: nested(depth) });
    t.equal(res.statusCode, 413, res.body);
    t.match(res.json().error, {
      code: 'payload_too_large',
      param: 'html',
      message: `html nests sections ${depth} deep, over the cap of 3 levels a template.`,
    });
  }
});

t.test(
  'a template that multiplies over long lists is stopped at its deadline: 422; others answer meanwhile',
  async (t) => {
    const { app, post, auth, balance } = await pdfApp(t, {
      ...STAND_INS,
      plugins: { pdf: { template_render_seconds: 1 } },
    });
    const created = await post('/v1/pdf/templates', { name: 'deep', html: nested(4, 'x') });
    t.equal(created.statusCode, 200, created.body);
    const l = Array.from({ length: 100 }, (_, i) => i);
    const before = await balance();
    const order: string[] = [];
    const generating = post('/v1/pdf/generate', {
      template_id: created.json().template_id,
      template_vars: { l },
    }).then((r) => (order.push('generate'), r));
    await until('the template rendering in a worker', () => runningTasks('pdf-templates') > 0 || order.length > 0);
    const read = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: auth });
    order.push('balance');
    t.equal(read.statusCode, 200);
    const res = await generating;
    t.same(order, ['balance', 'generate'], 'the balance read did not wait for the rendering');
    t.equal(res.statusCode, 422, res.body);
    t.match(res.json().error, { code: 'unprocessable', param: 'template_vars', message: /within 1000 ms/ });
    t.equal(await balance(), before, 'nothing charged');
    const small = await post('/v1/pdf/generate', {
      template_id: created.json().template_id,
      template_vars: { l: [1] },
    });
    t.equal(small.statusCode, 200, 'the next rendering gets a fresh thread');
  }
);
