import type { FastifyRequest } from 'fastify';
import { apiError } from '../../../core/kit/area.js';

export interface UploadedFile {
  /** The form field it came in (`file`, `image`, `image[]`, `mask`…). */
  field: string;
  bytes: Buffer;
  filename?: string;
  mime?: string;
}

export interface Upload {
  files: UploadedFile[];
  /** Text fields; a repeated one (such as `include[]`) keeps its last value. */
  fields: Record<string, string>;
}

export interface UploadLimits {
  /** One file's cap in bytes. */
  fileBytes: number;
  /** Said when the parser's `files` limit is hit: how many file parts the route takes. */
  tooManyFiles: string;
  /** The `param` of a file over its cap. */
  fileParam: string;
}

/**
 * Every part of a multipart/form-data body (OpenAI's upload endpoints), read into memory.
 * The route's scope registers @fastify/multipart with the caps; their failures become the
 * conventions' errors here, so an oversized or malformed upload is the caller's 4xx, not a 500.
 */
export async function readUpload(req: FastifyRequest, what: string, limits: UploadLimits): Promise<Upload> {
  if (!req.isMultipart()) throw apiError('unsupported_media_type', `Send the ${what} request as multipart/form-data.`);
  const up: Upload = { files: [], fields: {} };
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file')
        up.files.push({
          field: part.fieldname,
          bytes: await part.toBuffer(),
          filename: part.filename,
          mime: part.mimetype,
        });
      else up.fields[part.fieldname] = String(part.value);
    }
  } catch (e) {
    throw uploadError(e as Error & { code?: string; statusCode?: number }, limits);
  }
  return up;
}

function uploadError(e: Error & { code?: string; statusCode?: number }, limits: UploadLimits) {
  if (e.code === 'FST_REQ_FILE_TOO_LARGE') {
    return apiError('payload_too_large', `${limits.fileParam} is over the cap of ${limits.fileBytes} bytes a file.`, {
      param: limits.fileParam,
      details: { max_bytes: limits.fileBytes },
    });
  }
  if (e.code === 'FST_FILES_LIMIT')
    return apiError('payload_too_large', limits.tooManyFiles, { param: limits.fileParam });
  if (e.statusCode === 413) return apiError('payload_too_large', `The multipart body is over a cap: ${e.message}.`);
  return apiError('invalid_request', `The multipart/form-data body is malformed: ${e.message}.`);
}
