// The upstream every side of the AI bench calls: a minimal OpenAI Chat Completions server on
// loopback, in JavaScript so it runs without a build. It speaks the same wire format as
// test/fakes/openai-fake.ts (chat.completion, and chat.completion.chunk SSE ending in
// `data: [DONE]` with the usage chunk when stream_options.include_usage), and nothing else:
// it has to cost as little CPU as possible, since it shares the machine with what it measures.
import { createServer } from 'node:http';

const KEY = process.env.FAKE_KEY ?? 'sk-bench';
const WORDS = ['Hello', ' from', ' the', ' bench', ' fake', ' upstream', '.'];
let seq = 0;

function fail(res, status, message, type) {
  const body = JSON.stringify({ error: { message, type, param: null, code: null } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function chat(_req, res, raw) {
  let b;
  try {
    b = JSON.parse(raw);
  } catch {
    return fail(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
  }
  if (!b?.model || !Array.isArray(b.messages))
    return fail(res, 400, "Missing required parameter: 'messages'.", 'invalid_request_error');
  const id = `chatcmpl-bench${++seq}`;
  const created = Math.floor(Date.now() / 1000);
  const parts = WORDS;
  const usage = { prompt_tokens: 12, completion_tokens: parts.length, total_tokens: 12 + parts.length };
  if (!b.stream) {
    const body = JSON.stringify({
      id,
      object: 'chat.completion',
      created,
      model: b.model,
      choices: [
        { index: 0, message: { role: 'assistant', content: parts.join('') }, logprobs: null, finish_reason: 'stop' },
      ],
      usage,
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    return res.end(body);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  // The role event and the first token go out at once (time to first token is the point);
  // the rest follow one event loop turn apart, as a real stream arrives in pieces.
  res.write(chunk({ role: 'assistant', content: '' }) + chunk({ content: parts[0] }));
  let i = 1;
  const next = () => {
    if (res.destroyed) return;
    if (i < parts.length) {
      res.write(chunk({ content: parts[i++] }));
      return setImmediate(next);
    }
    let tail = chunk({}, 'stop');
    if (b.stream_options?.include_usage)
      tail += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [], usage })}\n\n`;
    res.end(`${tail}data: [DONE]\n\n`);
  };
  setImmediate(next);
}

const server = createServer((req, res) => {
  if (req.headers.authorization !== `Bearer ${KEY}`) {
    req.resume();
    return fail(res, 401, 'Incorrect API key provided.', 'invalid_request_error');
  }
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(
      JSON.stringify({
        object: 'list',
        data: [{ id: 'gpt-4o-mini', object: 'model', created: 1700000000, owned_by: 'openai' }],
      })
    );
  }
  if (req.method !== 'POST' || path !== '/v1/chat/completions') {
    req.resume();
    return fail(res, 404, `Unknown path ${path}`, 'invalid_request_error');
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => chat(req, res, Buffer.concat(chunks).toString('utf8')));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const sig of ['SIGINT', 'SIGTERM'])
  process.once(sig, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
