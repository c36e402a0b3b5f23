import t from 'tap';
import { builtinVendors } from '../../../vendors/builtin.js';
import { pdfApp } from './setup.js';

// database-independent: Chromium's tabs; the area's rows (templates) are templates.test.ts's, on both.

// A page with scripts may open tabs: window.open, a link or a form with target=_blank. None of
// them may throw outside a handler (an uncaught error there ends the gateway process): each
// render answers, and the gateway answers the next call.

const missing = builtinVendors.some((v) => v.name === 'chromium') ? false : 'the chromium engine is not built in yet';

const PAGES: Record<string, string> = {
  'window.open': `<script>window.open('http://example.invalid/popup', '_blank');</script><p>x</p>`,
  'a form submitted to _blank': `<form id="f" action="http://example.invalid/post" method="post" target="_blank">
      <input name="a" value="b"></form><script>document.getElementById('f').submit();</script><p>x</p>`,
  'a link clicked to _blank': `<a id="a" href="http://example.invalid/l" target="_blank">l</a>
      <script>document.getElementById('a').click();</script><p>x</p>`,
  'window.open of about:blank written to': `<script>const w = window.open('', '_blank');
      w.document.write('<img src="http://example.invalid/i.png">');</script><p>x</p>`,
};

t.test('a page opening tabs renders, and the gateway answers afterwards', { skip: missing }, async (t) => {
  const { app, post } = await pdfApp(t, {
    plugins: { pdf: { javascript: true } },
    egress: { allow_private: false, allow_loopback: false },
  });
  for (const [what, html] of Object.entries(PAGES)) {
    const res = await post('/v1/pdf/generate', { html });
    t.equal(res.statusCode, 200, res.statusCode === 200 ? what : `${what}: ${res.body}`);
    t.equal(res.json().pages, 1, what);
  }
  const version = await app.inject({ method: 'GET', url: '/v1/version' });
  t.equal(version.statusCode, 200, 'the gateway still answers');
});
