// long-pole: starts Chromium; started first so it does not run alone at the end (scripts/test-files.mjs).
import t from 'tap';
import { createSocket } from 'node:dgram';
import type { AddressInfo, Socket } from 'node:net';
import { Value } from '@sinclair/typebox/value';
import { CoreConfigSchema } from '../../../config/schema.js';
import { Egress } from '../../../core/egress/egress.js';
import { ForwardProxy, type ProxyDecision } from '../../../core/egress/forward-proxy.js';
import { guardedFetcher, instance, render, serve } from '../../helpers/chromium-render.js';

// The must-show of issue 27: what a page sends outside the request interception (a
// prefetch, a beacon, a keepalive fetch, WebRTC's STUN over UDP and TURN over TCP) reaches no
// loopback listener on a gateway that refuses loopback. Every one of them either meets the
// guard (the interception's fetcher or the forward proxy) or is never sent.

t.test('prefetch, beacon, keepalive fetch and WebRTC candidates reach no loopback listener', async (t) => {
  const egress = new Egress(Value.Default(CoreConfigSchema.properties.egress, {}) as any);
  t.teardown(() => egress.close());
  t.equal(egress.loopback.allowed, false, 'the gateway refuses loopback');
  // Whatever reaches the listeners, and whatever the guards turned away, by what it was.
  const reached: string[] = [];
  const guarded: string[] = [];
  const arrived = new Map<string, () => void>();
  const arrival = (what: string) => new Promise<void>((r) => arrived.set(what, r));
  let listener = '';
  /** `text`: a URL, or `CONNECT host:port` (TURN over TCP reaches the proxy as a tunnel to the listener). */
  const note = (list: string[], text: string) => {
    const what = text === `CONNECT ${listener}` ? 'turn' : /\/(prefetch|beacon|keepalive)$/.exec(text)?.[1];
    if (!what) return;
    list.push(what);
    arrived.get(what)?.();
  };
  const decisions: ProxyDecision[] = [];
  const proxy = await ForwardProxy.start(egress, (d) => {
    decisions.push(d);
    note(guarded, d.method === 'CONNECT' ? `CONNECT ${d.target}` : d.target);
  });
  t.teardown(() => proxy.close());
  const http = await serve(t, (req, res) => {
    note(reached, req.url ?? '');
    res.end();
  });
  listener = `127.0.0.1:${http.port}`;
  // Every connection counts: TURN over TCP speaks STUN framing, not HTTP (its first byte is 0x00 or 0x01).
  const connections: string[] = [];
  http.server.on('connection', (s: Socket) => {
    connections.push('tcp');
    s.once('data', (d) => d[0] < 0x20 && note(reached, `CONNECT ${listener}`));
  });
  const udp = createSocket('udp4');
  const stun: string[] = [];
  udp.on('message', (_m, from) => stun.push(`${from.address}:${from.port}`));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => udp.close(() => r())));
  const udpPort = (udp.address() as AddressInfo).port;

  const inst = await instance(t, {}, async () => proxy.url);
  const guard = guardedFetcher(t);
  // The page holds its `load` on /hold.png, answered once ICE gathering completes (the page
  // asks for /gathered then): every STUN and TURN attempt is made before the render ends.
  let gathered!: () => void;
  const done = new Promise<void>((r) => (gathered = r));
  const candidates: string[] = [];
  const fetchResource: typeof guard = async (url, init) => {
    const u = new URL(url);
    if (u.hostname === 'page.test' && u.pathname === '/gathered') {
      candidates.push(...JSON.parse(u.searchParams.get('c')!));
      gathered();
      return { status: 204, headers: {}, body: Buffer.alloc(0) };
    }
    if (u.hostname === 'page.test' && u.pathname === '/hold.png') {
      await done;
      return { status: 404, headers: {}, body: Buffer.alloc(0) };
    }
    note(guarded, url);
    return guard(url, init);
  };
  const loop = http.base;
  const html = `<link rel="prefetch" href="${loop}/prefetch">
    <script>
      navigator.sendBeacon('${loop}/beacon', 'x');
      fetch('${loop}/keepalive', { method: 'POST', body: 'x', keepalive: true }).catch(() => {});
      const found = [];
      const pc = new RTCPeerConnection({ iceServers: [
        { urls: 'stun:127.0.0.1:${udpPort}' },
        { urls: 'turn:127.0.0.1:${http.port}?transport=tcp', username: 'u', credential: 'c' },
      ] });
      pc.createDataChannel('x');
      pc.onicecandidate = (e) => { if (e.candidate) found.push(e.candidate.candidate); };
      pc.onicegatheringstatechange = () => {
        if (pc.iceGatheringState === 'complete')
          new Image().src = 'http://page.test/gathered?c=' + encodeURIComponent(JSON.stringify(found));
      };
      pc.createOffer().then((o) => pc.setLocalDescription(o));
    </script>
    <img src="http://page.test/hold.png"><p>text</p>`;
  const out = await render(inst, { html, javascript: true, fetchResource });
  t.equal(out.pages, 1);
  // A prefetch, a beacon or a keepalive fetch may leave as the page goes: each is awaited
  // where it lands (the guard now; the listener before the proxy).
  const kinds = ['prefetch', 'beacon', 'keepalive', 'turn'];
  await Promise.all(kinds.map((w) => (reached.includes(w) || guarded.includes(w) ? 0 : arrival(w))));
  t.same(reached, [], 'no HTTP or TURN request reached the loopback listener');
  t.same(connections, [], 'not even a connection');
  t.same(stun, [], 'no STUN packet reached the loopback UDP listener');
  t.notMatch(candidates.join('\n'), / (srflx|relay) /, 'no candidate through a loopback STUN or TURN server');
  t.ok(
    decisions.every((d) => !d.allowed),
    `the proxy let nothing through: ${JSON.stringify(decisions.filter((d) => d.allowed))}`
  );
  t.same([...new Set(guarded)].sort(), [...kinds].sort(), 'each was turned away by a guard');
});
