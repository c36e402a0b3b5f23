// long-pole: starts Chromium; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import type { ResourceFetcher } from '../../../core/capabilities/pdf.js';
import { instance, render } from '../../helpers/chromium-render.js';

// One tenant's job leaves nothing the next one sees: scriptless jobs share a reused tab
// (cookies cleared between them), jobs with scripts get a context of their own.

// One browser for the file, launched by the first render (a launch costs seconds of CPU on a
// loaded machine): one test's jobs follow the other's on it, as tenants' jobs do.
const browser = instance(t, { concurrency: 1 });

t.test("a cookie one job's document set is not sent with the next job's requests", async (t) => {
  const inst = await browser;
  const cookies: Record<string, string | undefined> = {};
  const fetchResource: ResourceFetcher = async (url, init) => {
    const path = new URL(url).pathname;
    cookies[path] = init.headers.cookie;
    const headers: Record<string, string> = { 'content-type': path.endsWith('.svg') ? 'image/svg+xml' : 'text/html' };
    if (path === '/a') headers['set-cookie'] = 'sid=tenant-a; Path=/; Max-Age=3600';
    const body = path.endsWith('.svg') ? '<svg xmlns="http://www.w3.org/2000/svg"/>' : '<img src="/in-a.svg">';
    return { status: 200, headers, body: Buffer.from(body) };
  };
  // First-party cookies: the documents come from the site itself (a third party's are blocked anyway).
  await render(inst, { url: 'http://site.test/a', fetchResource });
  t.equal(cookies['/in-a.svg'], 'sid=tenant-a', 'within the job the cookie is sent (so the check below can fail)');
  await render(inst, { url: 'http://site.test/b', fetchResource });
  t.equal(cookies['/b'], undefined, "the next job's document was requested without it");
});

t.test('storage a script wrote is gone for the next job', async (t) => {
  const inst = await browser;
  // The same origin each time; with scripts on, the page records whether it found the key.
  const page = `<p id="p">x</p><script>
    const seen = localStorage.getItem('k'); localStorage.setItem('k', 'tenant-a');
    new Image().src = '/seen?' + (seen ?? 'none');</script><img src="/hold.svg">`;
  const seen: string[] = [];
  let release!: () => void;
  const fetchResource: ResourceFetcher = async (url) => {
    const u = new URL(url);
    if (u.pathname === '/seen') {
      seen.push(u.search.slice(1));
      release();
    }
    if (u.pathname === '/hold.svg') await new Promise<void>((r) => (release = r));
    if (u.pathname === '/') return { status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from(page) };
    return { status: 404, headers: {}, body: Buffer.alloc(0) };
  };
  await render(inst, { url: 'http://site.test/', javascript: true, fetchResource });
  await render(inst, { url: 'http://site.test/', javascript: true, fetchResource });
  t.same(seen, ['none', 'none'], "the second job did not find the first one's key");
});
