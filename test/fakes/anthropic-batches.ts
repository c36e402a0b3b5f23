import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { words } from './script.js';
import { sample } from './json-sample.js';

type Req = { method: string; path: string; body: any };

const rid = () => randomBytes(10).toString('hex');

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, message: string) {
  json(res, status, {
    type: 'error',
    error: { type: status === 404 ? 'not_found_error' : 'invalid_request_error', message },
  });
}

/**
 * Anthropic's Message Batches as the API speaks them: a `message_batch` object whose
 * `processing_status` goes in_progress → ended after `pollsUntilDone` GETs, then a
 * `results_url` serving JSONL with one `{custom_id, result}` per request. POST
 * /v1/messages/batches/{id}/cancel moves an unfinished batch to `canceling` (ended, its requests
 * `canceled`, at the next GET); an ended one cannot be canceled (400). `canceled` lists the ids asked.
 */
export class AnthropicBatchFake {
  readonly batches = new Map<
    string,
    { wire: Record<string, any>; requests: Array<{ custom_id: string; params: any }>; polls: number; outcome: string }
  >();
  pollsUntilDone = 1;
  /** Batch ids POST /v1/messages/batches/{id}/cancel was called for, in order (accepted or not). */
  readonly canceled: string[] = [];
  /** `succeeded`, `errored` or `expired`: how the requests of the next batches end. */
  outcome: 'succeeded' | 'errored' | 'expired' = 'succeeded';
  content = 'Hello from an Anthropic batch.';

  constructor(private readonly baseUrl: () => string) {}

  handle(req: Req, res: ServerResponse): boolean {
    if (req.method === 'POST' && req.path === '/v1/messages/batches') return (this.create(req, res), true);
    const c = /^\/v1\/messages\/batches\/([^/]+)\/cancel$/.exec(req.path);
    if (req.method === 'POST' && c) return (this.cancel(c[1], res), true);
    const m = /^\/v1\/messages\/batches\/([^/]+)(\/results)?$/.exec(req.path);
    if (req.method !== 'GET' || !m) return false;
    const b = this.batches.get(m[1]);
    if (!b) return (error(res, 404, `No batch ${m[1]}`), true);
    if (m[2]) {
      if (b.wire.processing_status !== 'ended')
        return (error(res, 400, 'Results are not available until the batch has ended.'), true);
      res.writeHead(200, { 'content-type': 'application/binary' });
      return (
        res.end(
          `${b.requests
            .map((r) => JSON.stringify({ custom_id: r.custom_id, result: this.result(r.params, b.outcome) }))
            .join('\n')}\n`
        ),
        true
      );
    }
    b.polls++;
    if (b.wire.processing_status === 'canceling') {
      const n = b.requests.length;
      Object.assign(b.wire, {
        processing_status: 'ended',
        ended_at: new Date().toISOString(),
        results_url: `${this.baseUrl()}/v1/messages/batches/${b.wire.id}/results`,
        request_counts: { processing: 0, succeeded: 0, errored: 0, canceled: n, expired: 0 },
      });
      b.outcome = 'canceled';
    } else if (b.wire.processing_status === 'in_progress' && b.polls > this.pollsUntilDone) {
      const n = b.requests.length;
      Object.assign(b.wire, {
        processing_status: 'ended',
        ended_at: new Date().toISOString(),
        results_url: `${this.baseUrl()}/v1/messages/batches/${b.wire.id}/results`,
        request_counts: {
          processing: 0,
          succeeded: b.outcome === 'succeeded' ? n : 0,
          errored: b.outcome === 'errored' ? n : 0,
          canceled: 0,
          expired: b.outcome === 'expired' ? n : 0,
        },
      });
    }
    return (json(res, 200, b.wire), true);
  }

  private cancel(id: string, res: ServerResponse) {
    this.canceled.push(id);
    const b = this.batches.get(id);
    if (!b) return error(res, 404, `No batch ${id}`);
    if (b.wire.processing_status === 'ended')
      return error(res, 400, `Batch ${id} has already ended and cannot be canceled.`);
    Object.assign(b.wire, { processing_status: 'canceling', cancel_initiated_at: new Date().toISOString() });
    json(res, 200, b.wire);
  }

  private create(req: Req, res: ServerResponse) {
    const requests = req.body?.requests;
    if (!Array.isArray(requests) || !requests.length) return error(res, 400, 'requests: Field required');
    for (const r of requests) {
      if (typeof r.custom_id !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(r.custom_id))
        return error(res, 400, 'requests.0.custom_id: String should match pattern ^[a-zA-Z0-9_-]{1,64}$');
      if (!r.params?.model || typeof r.params.max_tokens !== 'number' || !Array.isArray(r.params.messages))
        return error(res, 400, 'requests.0.params: model, max_tokens and messages are required');
      if (r.params.stream) return error(res, 400, 'requests.0.params.stream: streaming is not supported in batches');
    }
    const now = new Date();
    const wire = {
      id: `msgbatch_${rid()}`,
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + 86_400_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: null,
      results_url: null,
    };
    this.batches.set(wire.id, { wire, requests, polls: 0, outcome: this.outcome });
    json(res, 200, wire);
  }

  private result(params: any, outcome: string) {
    if (outcome === 'errored')
      return {
        type: 'errored',
        error: {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: 'max_tokens: 1000000 > 64000, which is the maximum allowed',
          },
        },
      };
    if (outcome === 'expired' || outcome === 'canceled') return { type: outcome };
    // A forced tool (`tool_choice: {type: tool}`) is called with an input that fits its schema.
    const forced =
      params.tool_choice?.type === 'tool'
        ? params.tools?.find((x: any) => x.name === params.tool_choice.name)
        : undefined;
    const content = forced
      ? [{ type: 'tool_use', id: `toolu_${rid()}`, name: forced.name, input: sample(forced.input_schema) }]
      : [{ type: 'text', text: this.content }];
    return {
      type: 'succeeded',
      message: {
        id: `msg_${rid()}`,
        type: 'message',
        role: 'assistant',
        model: params.model,
        content,
        stop_reason: forced ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: 14,
          output_tokens: words(this.content).length,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    };
  }
}
