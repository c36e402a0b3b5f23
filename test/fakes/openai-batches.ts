import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { words } from './script.js';

type Req = { method: string; path: string; headers: Record<string, string | string[] | undefined>; body: any };

const rid = (n = 12) => randomBytes(n).toString('hex');

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function invalid(res: ServerResponse, message: string, status = 400) {
  json(res, status, { error: { message, type: 'invalid_request_error', param: null, code: null } });
}

/** The parts of a multipart/form-data body: name -> content (files and fields alike). */
function parseMultipart(raw: string, contentType: string): Map<string, { filename?: string; content: string }> {
  const boundary = /boundary=([^;]+)/.exec(contentType)?.[1];
  const out = new Map<string, { filename?: string; content: string }>();
  if (!boundary) return out;
  for (const part of raw.split(`--${boundary}`)) {
    const at = part.indexOf('\r\n\r\n');
    if (at < 0) continue;
    const head = part.slice(0, at);
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (!name) continue;
    out.set(name, { filename: /filename="([^"]+)"/.exec(head)?.[1], content: part.slice(at + 4).replace(/\r\n$/, '') });
  }
  return out;
}

/**
 * OpenAI's Files, Batch and Realtime client-secret endpoints, as the real API speaks them:
 * a JSONL upload (multipart, purpose "batch"), the Batch object moving validating →
 * in_progress → completed (or failed / expired), the output and error files as JSONL, and
 * `ek_` ephemeral client secrets. `pollsUntilDone` GETs see the batch still in progress.
 * POST /batches/{id}/cancel moves an unfinished batch to `cancelling`, and the next GET to
 * `cancelled`; a finished one cannot be cancelled (400). `canceled` lists the ids asked.
 */
export class OpenAiBatchFake {
  readonly files = new Map<string, { purpose: string; filename: string; content: string }>();
  readonly batches = new Map<string, Record<string, any> & { polls: number }>();
  readonly secrets: Array<{ value: string; body: any }> = [];
  pollsUntilDone = 1;
  /** Batch ids POST /batches/{id}/cancel was called for, in order (accepted or not). */
  readonly canceled: string[] = [];
  /** While set, GET /batches/{id} answers with this status (a vendor outage for the polls only). */
  pollStatus?: number;
  /** How the next batches end: `completed`, `failed` (validation), `expired`, or `request_error` (completed, the request errored). */
  outcome: 'completed' | 'failed' | 'expired' | 'request_error' = 'completed';
  content = 'Hello from a batch.';
  usage = { prompt_tokens: 12, completion_tokens: 0 };

  /** Answers the request when it is one of these endpoints; false leaves it to the chat fake. */
  handle(req: Req, res: ServerResponse): boolean {
    const p = req.path.replace(/^\/v1/, '');
    if (req.method === 'POST' && p === '/files') return (this.upload(req, res), true);
    if (req.method === 'GET' && /^\/files\/[^/]+\/content$/.test(p)) {
      const f = this.files.get(decodeURIComponent(p.split('/')[2]));
      if (!f) return (invalid(res, 'No such File object', 404), true);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return (res.end(f.content), true);
    }
    if (req.method === 'POST' && p === '/batches') return (this.create(req, res), true);
    if (req.method === 'GET' && /^\/batches\/[^/]+$/.test(p)) {
      if (this.pollStatus)
        return (
          json(res, this.pollStatus, {
            error: {
              message: 'The server had an error while processing your request.',
              type: 'server_error',
              param: null,
              code: null,
            },
          }),
          true
        );
      return (this.retrieve(decodeURIComponent(p.split('/')[2]), res), true);
    }
    if (req.method === 'POST' && /^\/batches\/[^/]+\/cancel$/.test(p))
      return (this.cancel(decodeURIComponent(p.split('/')[2]), res), true);
    if (req.method === 'POST' && p === '/realtime/client_secrets') return (this.clientSecret(req, res), true);
    return false;
  }

  private upload(req: Req, res: ServerResponse) {
    const parts = parseMultipart(
      typeof req.body === 'string' ? req.body : '',
      String(req.headers['content-type'] ?? '')
    );
    const purpose = parts.get('purpose')?.content;
    const file = parts.get('file');
    if (!purpose || !file?.filename)
      return invalid(res, "Missing required parameter: 'file' and 'purpose' (multipart/form-data).");
    if (purpose === 'batch') {
      for (const line of file.content.split('\n').filter((l) => l.trim())) {
        let r: any;
        try {
          r = JSON.parse(line);
        } catch {
          return invalid(res, 'The batch input file is not valid JSONL.');
        }
        if (!r.custom_id || r.method !== 'POST' || !r.url || !r.body?.model || !Array.isArray(r.body.messages))
          return invalid(res, 'Each batch line needs custom_id, method, url and a body with model and messages.');
      }
    }
    const id = `file-${rid()}`;
    this.files.set(id, { purpose, filename: file.filename, content: file.content });
    json(res, 200, {
      id,
      object: 'file',
      bytes: Buffer.byteLength(file.content),
      created_at: Math.floor(Date.now() / 1000),
      filename: file.filename,
      purpose,
      status: 'processed',
    });
  }

  private create(req: Req, res: ServerResponse) {
    const b = req.body ?? {};
    const input = this.files.get(b.input_file_id);
    if (!input) return invalid(res, `No file with id '${b.input_file_id}'.`);
    if (b.endpoint !== '/v1/chat/completions' && b.endpoint !== '/v1/embeddings')
      return invalid(res, `Invalid endpoint ${b.endpoint}.`);
    if (b.completion_window !== '24h') return invalid(res, 'completion_window must be 24h.');
    const now = Math.floor(Date.now() / 1000);
    const id = `batch_${rid()}`;
    const lines = input.content.split('\n').filter((l) => l.trim());
    const batch = {
      id,
      object: 'batch',
      endpoint: b.endpoint,
      errors: null,
      input_file_id: b.input_file_id,
      completion_window: '24h',
      status: 'validating',
      output_file_id: null,
      error_file_id: null,
      created_at: now,
      in_progress_at: null,
      expires_at: now + 86400,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      request_counts: { total: lines.length, completed: 0, failed: 0 },
      metadata: b.metadata ?? null,
      polls: 0,
      outcome: this.outcome,
    };
    this.batches.set(id, batch);
    const { polls: _p, outcome: _o, ...wire } = batch;
    json(res, 200, wire);
  }

  private cancel(id: string, res: ServerResponse) {
    this.canceled.push(id);
    const b = this.batches.get(id);
    if (!b) return invalid(res, `No batch found with id '${id}'.`, 404);
    if (!['validating', 'in_progress', 'finalizing'].includes(b.status))
      return invalid(res, `Cannot cancel a batch with status '${b.status}'.`);
    Object.assign(b, { status: 'cancelling', cancelling_at: Math.floor(Date.now() / 1000) });
    const { polls: _p, outcome: _o, ...wire } = b;
    json(res, 200, wire);
  }

  private retrieve(id: string, res: ServerResponse) {
    const b = this.batches.get(id);
    if (!b) return invalid(res, `No batch found with id '${id}'.`, 404);
    b.polls++;
    // Nothing had finished when the cancel came: the batch ends with no output file.
    if (b.status === 'cancelling')
      Object.assign(b, { status: 'cancelled', cancelled_at: Math.floor(Date.now() / 1000) });
    if (b.status === 'validating' || b.status === 'in_progress') {
      if (b.polls <= this.pollsUntilDone) b.status = 'in_progress';
      else this.finish(b);
    }
    const { polls: _p, outcome: _o, ...wire } = b;
    json(res, 200, wire);
  }

  private finish(b: Record<string, any>) {
    const now = Math.floor(Date.now() / 1000);
    if (b.outcome === 'failed') {
      Object.assign(b, {
        status: 'failed',
        failed_at: now,
        errors: {
          object: 'list',
          data: [
            { code: 'invalid_request', message: 'The model `alpha` does not support batch.', param: null, line: 1 },
          ],
        },
      });
      return;
    }
    if (b.outcome === 'expired') {
      Object.assign(b, { status: 'expired', expired_at: now });
      return;
    }
    const out: string[] = [];
    const err: string[] = [];
    for (const line of this.files
      .get(b.input_file_id)!
      .content.split('\n')
      .filter((l) => l.trim())) {
      const r = JSON.parse(line);
      if (b.outcome === 'request_error') {
        err.push(
          JSON.stringify({
            id: `batch_req_${rid(6)}`,
            custom_id: r.custom_id,
            response: {
              status_code: 400,
              request_id: rid(),
              body: { error: { message: 'Invalid value for messages.', type: 'invalid_request_error' } },
            },
            error: null,
          })
        );
        continue;
      }
      const usage = {
        prompt_tokens: this.usage.prompt_tokens,
        completion_tokens: this.usage.completion_tokens || words(this.content).length,
      };
      out.push(
        JSON.stringify({
          id: `batch_req_${rid(6)}`,
          custom_id: r.custom_id,
          error: null,
          response: {
            status_code: 200,
            request_id: rid(),
            body: {
              id: `chatcmpl-${rid(6)}`,
              object: 'chat.completion',
              created: now,
              model: r.body.model,
              choices: [
                {
                  index: 0,
                  message: { role: 'assistant', content: this.content },
                  logprobs: null,
                  finish_reason: 'stop',
                },
              ],
              usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
            },
          },
        })
      );
    }
    const save = (lines: string[]) => {
      if (!lines.length) return null;
      const id = `file-${rid()}`;
      this.files.set(id, { purpose: 'batch_output', filename: 'batch_output.jsonl', content: `${lines.join('\n')}\n` });
      return id;
    };
    Object.assign(b, {
      status: 'completed',
      completed_at: now,
      output_file_id: save(out),
      error_file_id: save(err),
      request_counts: { total: out.length + err.length, completed: out.length, failed: err.length },
    });
  }

  private clientSecret(req: Req, res: ServerResponse) {
    const b = req.body ?? {};
    const seconds = b.expires_after?.seconds ?? 600;
    if (b.expires_after && (b.expires_after.anchor !== 'created_at' || seconds < 10 || seconds > 7200))
      return invalid(res, 'expires_after.seconds must be between 10 and 7200.');
    if (b.session?.type !== 'realtime') return invalid(res, "Missing required parameter: 'session.type'.");
    const value = `ek_${rid(16)}`;
    this.secrets.push({ value, body: b });
    json(res, 200, {
      value,
      expires_at: Math.floor(Date.now() / 1000) + seconds,
      session: {
        type: 'realtime',
        object: 'realtime.session',
        id: `sess_${rid(8)}`,
        model: b.session.model ?? 'gpt-realtime',
        output_modalities: ['audio'],
        audio: b.session.audio ?? {},
      },
    });
  }
}
