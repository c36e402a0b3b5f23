import type { FastifyRequest } from 'fastify';
import {
  type Svc,
  apiError,
  type CallOptions,
  PDF_MAX_INPUT_BYTES,
  PDF_MAX_MERGE_URLS,
  PDF_MAX_SPLIT_RANGES,
  type PdfMergeInput,
  type PdfOcrInput,
  type PdfOcrOutput,
  type PdfOutput,
  type PdfRenderInput,
  type PdfSplitInput,
  type PdfSplitOutput,
  type PdfWatermarkInput,
  fieldError,
} from '../../core/kit/area.js';
import type { PdfConfigT } from './config.js';
import { fetchInput, resourceFetcher } from './input.js';
import { ocrLanguages } from './languages.js';
import { parseRanges } from './ranges.js';
import type { TemplateStore } from './templates.js';
import type { GenerateBodyT, MergeBodyT, OcrBodyT, PdfResultT, SplitBodyT, WatermarkBodyT } from './schemas.js';

/** Said by generate's 503 and by discovery when no engine renders: the local engine needs a browser. */
export const RENDER_HINT =
  'pdf.render needs Chromium on the gateway machine: install it (Debian/Ubuntu: `apt-get install -y chromium`) '
  + 'or point the chromium engine at a browser with `vendors: [{ id: chromium, use: chromium, config: '
  + '{ executable_path: /path/to/chromium } }]`.';

function overCap(param: string, what: string, n: number, cap: number) {
  return apiError('payload_too_large', `${param} has ${n} ${what}, over the cap of ${cap}.`, {
    param,
    details: { max_items: cap },
  });
}

/** The PDF area's work: inputs fetched here (egress), documents made by an engine, results saved. */
export class PdfService {
  constructor(
    private readonly svc: Svc,
    private readonly cfg: PdfConfigT,
    private readonly templates: TemplateStore
  ) {}

  private options(req: FastifyRequest): CallOptions {
    const p = req.principal!;
    return {
      accountId: p.accountId,
      region: p.region,
      meter: req.meter,
      ref: req.id,
      timeoutMs: this.cfg.timeout_seconds * 1000,
    };
  }

  /** The capability has a vendor, before anything is fetched or charged (the router's one 503). */
  private need(req: FastifyRequest, capability: string): void {
    this.svc.router.assertServed(capability, { region: req.principal!.region });
  }

  private async call<I, O>(req: FastifyRequest, capability: string, input: I): Promise<O> {
    return (await this.svc.router.call<I, O>(capability, input, this.options(req))).output;
  }

  private async save(req: FastifyRequest, out: PdfOutput, name = 'document.pdf'): Promise<PdfResultT> {
    const saved = await this.svc.results.save(req.principal!.accountId, out.data, {
      contentType: 'application/pdf',
      filename: name,
      inline: true,
    });
    return { pdf_url: saved.url, bytes: out.data.length, pages: out.pages };
  }

  async generate(req: FastifyRequest, body: GenerateBodyT): Promise<PdfResultT> {
    const sources = (['html', 'url', 'template_id'] as const).filter((k) => body[k] !== undefined);
    if (sources.length !== 1)
      throw fieldError(
        sources[1] ?? 'html',
        sources.length
          ? `cannot be sent with ${sources[0]}: send exactly one of html, url and template_id`
          : 'is missing: send exactly one of html, url and template_id'
      );
    if (body.template_vars !== undefined && body.template_id === undefined)
      throw fieldError('template_vars', 'is only used with template_id');
    this.need(req, 'pdf.render');
    const accountId = req.principal!.accountId;
    // A private or loopback address is the caller's 400, before anything is charged.
    if (body.url !== undefined) await this.svc.egress.check(body.url, 'url');
    const html =
      body.template_id !== undefined
        ? await this.templates.render(accountId, body.template_id, body.template_vars)
        : body.html;
    const input: PdfRenderInput = {
      ...(html !== undefined ? { html } : { url: body.url }),
      format: body.format ?? 'A4',
      orientation: body.orientation ?? 'portrait',
      javascript: this.cfg.javascript,
      fetchResource: resourceFetcher(this.svc.egress),
    };
    return this.save(req, await this.call<PdfRenderInput, PdfOutput>(req, 'pdf.render', input));
  }

  async merge(req: FastifyRequest, body: MergeBodyT): Promise<PdfResultT> {
    if (body.urls.length > PDF_MAX_MERGE_URLS) throw overCap('urls', 'URLs', body.urls.length, PDF_MAX_MERGE_URLS);
    this.need(req, 'pdf.merge');
    const documents: Buffer[] = [];
    let total = 0;
    for (const [i, url] of body.urls.entries()) {
      const data = await fetchInput(this.svc.egress, url, `urls[${i}]`);
      total += data.length;
      // 50 documents of the per-document cap would be 2.5 GB in memory at once.
      if (total > 2 * PDF_MAX_INPUT_BYTES)
        throw apiError(
          'payload_too_large',
          `The documents to merge are over ${2 * PDF_MAX_INPUT_BYTES} bytes together.`,
          {
            param: 'urls',
            details: { max_bytes: 2 * PDF_MAX_INPUT_BYTES },
          }
        );
      documents.push(data);
    }
    return this.save(req, await this.call<PdfMergeInput, PdfOutput>(req, 'pdf.merge', { documents }), 'merged.pdf');
  }

  async split(req: FastifyRequest, body: SplitBodyT): Promise<{ parts: PdfResultT[] }> {
    if (body.ranges.length > PDF_MAX_SPLIT_RANGES)
      throw overCap('ranges', 'ranges', body.ranges.length, PDF_MAX_SPLIT_RANGES);
    const ranges = parseRanges(body.ranges);
    this.need(req, 'pdf.split');
    const data = await fetchInput(this.svc.egress, body.url, 'url');
    const out = await this.call<PdfSplitInput, PdfSplitOutput>(req, 'pdf.split', { data, ranges });
    const parts: PdfResultT[] = [];
    for (const [i, part] of out.parts.entries()) parts.push(await this.save(req, part, `part-${i + 1}.pdf`));
    return { parts };
  }

  async watermark(req: FastifyRequest, body: WatermarkBodyT): Promise<PdfResultT> {
    if ((body.text === undefined) === (body.image_url === undefined))
      throw body.text === undefined
        ? fieldError('text', 'is missing: send exactly one of text and image_url')
        : fieldError('image_url', 'cannot be sent with text: send exactly one of text and image_url');
    this.need(req, 'pdf.watermark');
    const data = await fetchInput(this.svc.egress, body.url, 'url');
    const image =
      body.image_url !== undefined
        ? await fetchInput(this.svc.egress, body.image_url, 'image_url', 'an image')
        : undefined;
    const input: PdfWatermarkInput = {
      data,
      ...(image ? { image } : { text: body.text }),
      opacity: body.opacity ?? 0.3,
      position: body.position ?? 'center',
      rotation: body.rotation ?? (image ? 0 : 45),
    };
    return this.save(
      req,
      await this.call<PdfWatermarkInput, PdfOutput>(req, 'pdf.watermark', input),
      'watermarked.pdf'
    );
  }

  async ocr(req: FastifyRequest, body: OcrBodyT): Promise<PdfOcrOutput> {
    const languages = ocrLanguages(body.language);
    this.need(req, 'pdf.ocr');
    const data = await fetchInput(this.svc.egress, body.url, 'url');
    return this.call<PdfOcrInput, PdfOcrOutput>(req, 'pdf.ocr', { data, languages });
  }
}
