import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { FakeServer, words, type Script } from './script.js';
import { inlineImages } from './gemini-images.js';
import { cutAtStop, sample } from './json-sample.js';

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function error(res: ServerResponse, status: number, message: string, retryAfter?: string) {
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    ...(retryAfter ? { 'retry-after': retryAfter } : {}),
  });
  res.end(JSON.stringify({ error: { code: status, message, status: STATUS[status] ?? 'UNKNOWN' } }));
}

const chunk = (res: ServerResponse, data: unknown) => res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);

/** Fields of Gemini's Schema message (the OpenAPI subset): any other key is a 400, as protobuf parsing makes it. */
const SCHEMA_KEYS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
const TYPES = new Set(['TYPE_UNSPECIFIED', 'STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL']);

function schemaProblem(s: any, at: string): string | undefined {
  for (const k of Object.keys(s ?? {}))
    if (!SCHEMA_KEYS.has(k)) return `Invalid JSON payload received. Unknown name "${k}" at '${at}': Cannot find field.`;
  if (s.type !== undefined && !TYPES.has(s.type))
    return `Invalid value at '${at}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "${s.type}"`;
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const p = schemaProblem(v, `${at}.properties[${k}].value`);
    if (p) return p;
  }
  for (const [i, v] of (s.anyOf ?? []).entries()) {
    const p = schemaProblem(v, `${at}.any_of[${i}]`);
    if (p) return p;
  }
  return s.items ? schemaProblem(s.items, `${at}.items`) : undefined;
}

/** generationConfig and toolConfig as the API checks them. */
function configProblem(b: any): string | undefined {
  const g = b.generationConfig ?? {};
  if (g.responseSchema && g.responseJsonSchema) return 'responseSchema and responseJsonSchema cannot both be set.';
  if ((g.responseSchema || g.responseJsonSchema) && g.responseMimeType !== 'application/json')
    return 'Setting a response schema requires responseMimeType application/json.';
  if (g.responseSchema) return schemaProblem(g.responseSchema, 'generation_config.response_schema');
  if (g.stopSequences && (!Array.isArray(g.stopSequences) || g.stopSequences.length > 5))
    return 'generation_config.stop_sequences: at most 5 stop sequences.';
  const f = b.toolConfig?.functionCallingConfig;
  if (f && !['AUTO', 'ANY', 'NONE', 'VALIDATED'].includes(f.mode))
    return `Invalid value at 'tool_config.function_calling_config.mode', "${f.mode}"`;
  if (f?.allowedFunctionNames && f.mode !== 'ANY') return 'allowed_function_names may only be set when mode is ANY.';
  const names = (b.tools?.[0]?.functionDeclarations ?? []).map((d: any) => d.name);
  const unknown = (f?.allowedFunctionNames ?? []).find((n: string) => !names.includes(n));
  return unknown ? `allowed_function_names: ${unknown} is not a declared function.` : undefined;
}

/** The function the model calls: per functionCallingConfig's mode, else the first unless a result was just given. */
function functionCall(b: any, lastIsResult: boolean): { name: string; args: unknown } | undefined {
  const decls = b.tools?.[0]?.functionDeclarations ?? [];
  const f = b.toolConfig?.functionCallingConfig;
  if (!decls.length || f?.mode === 'NONE') return undefined;
  if (f?.mode === 'ANY') return { name: f.allowedFunctionNames?.[0] ?? decls[0].name, args: { city: 'Paris' } };
  return lastIsResult ? undefined : { name: decls[0].name, args: { city: 'Paris' } };
}

/**
 * A fake of the Gemini API (v1beta) on loopback: `x-goog-api-key` (or `?key=`), generateContent,
 * streamGenerateContent?alt=sse (CRLF-separated events, no terminator: the last carries
 * finishReason and usageMetadata), functionCall parts and toolConfig.functionCallingConfig,
 * generationConfig (responseMimeType application/json answers JSON fitting responseJsonSchema
 * or responseSchema, whose OpenAPI-subset keys are checked; stopSequences cut the answer),
 * batchEmbedContents, Google error bodies (a bad key is 400 INVALID_ARGUMENT).
 */
export function geminiFake(opts: { key?: string } = {}): FakeServer {
  return new FakeServer(async (req, res, s: Script) => {
    const key = req.headers['x-goog-api-key'];
    if (opts.key && key !== opts.key) return error(res, 400, 'API key not valid. Please pass a valid API key.');
    if (s.status)
      return error(
        res,
        s.status,
        s.status === 429 ? 'Resource has been exhausted (e.g. check quota).' : 'An internal error has occurred.',
        s.retryAfter
      );
    if (req.method === 'GET' && req.path.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ models: [{ name: 'models/gemini-2.5-flash' }] }));
    }
    const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/.exec(req.path);
    if (req.method !== 'POST' || !m) return error(res, 404, `Unknown path ${req.path}`);
    const [, model, method] = m;
    const b = req.body;
    if (method === 'batchEmbedContents') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          embeddings: b.requests.map((r: any) => {
            const h = createHash('sha256').update(r.content.parts[0].text).digest();
            return { values: Array.from({ length: r.outputDimensionality ?? 8 }, (_, i) => (h[i % 32] - 128) / 128) };
          }),
        })
      );
    }
    if (!Array.isArray(b?.contents) || b.contents.some((c: any) => !['user', 'model'].includes(c.role)))
      return error(res, 400, 'Please use a valid role: user, model.');
    const problem = configProblem(b);
    if (problem) return error(res, 400, problem);
    const seen = inlineImages(b.contents, (st, m) => error(res, st, m));
    if (seen === null) return;
    const g = b.generationConfig ?? {};
    const json =
      g.responseMimeType === 'application/json'
        ? JSON.stringify(sample(g.responseJsonSchema ?? g.responseSchema ?? { type: 'object' }))
        : undefined;
    const content = cutAtStop(s.content ?? seen ?? json ?? 'Hello from fake-gemini.', g.stopSequences).text;
    const usageMetadata = {
      promptTokenCount: s.usage?.input ?? 9,
      candidatesTokenCount: s.usage?.output ?? words(content).length,
      totalTokenCount: 0,
    };
    usageMetadata.totalTokenCount = usageMetadata.promptTokenCount + usageMetadata.candidatesTokenCount;
    const lastIsResult = JSON.stringify(b.contents.at(-1)).includes('functionResponse');
    const tool = functionCall(b, lastIsResult);
    const modelVersion = model;
    if (method === 'generateContent') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const parts = tool ? [{ functionCall: tool }] : [{ text: content }];
      return res.end(
        JSON.stringify({
          candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
          usageMetadata,
          modelVersion,
        })
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (tool) {
      chunk(res, {
        candidates: [{ content: { role: 'model', parts: [{ functionCall: tool }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata,
        modelVersion,
      });
      return res.end();
    }
    const parts = words(content);
    for (const [i, p] of parts.entries()) {
      if (s.stallAfter !== undefined && i === s.stallAfter) return;
      if (s.malformedAfter !== undefined && i === s.malformedAfter)
        return void res.end('data: {"candidates": [\r\n\r\n');
      if (s.cutAfter !== undefined && i === s.cutAfter) return void res.end();
      const last = i === parts.length - 1;
      chunk(res, {
        candidates: [
          { content: { role: 'model', parts: [{ text: p }] }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 },
        ],
        ...(last ? { usageMetadata } : {}),
        modelVersion,
      });
      await new Promise((ok) => setImmediate(ok));
    }
    res.end();
  });
}
