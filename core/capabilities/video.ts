import type { CapabilityImpl } from '../vendor-api.js';
import { capabilities, capability } from './capability.js';

// The AI video contracts: `video.generate` submits a text-to-video job to a vendor,
// `video.poll` asks how it went (and, once done, hands the bytes over), `video.cancel` asks the
// vendor to stop it (best effort). The area runs the job on the core's jobs engine; the vendor
// keeps no state the gateway needs, so a restart polls the same vendor job again. Each adapter
// declares its models (prices a second per resolution, aspects, durations) on its
// `video.generate` implementation, which is what the area's planner routes by.

export const VIDEO_ASPECTS = ['16:9', '9:16', '1:1'] as const;
export type VideoAspect = (typeof VIDEO_ASPECTS)[number];
export const VIDEO_RESOLUTIONS = ['720p', '1080p', '4k'] as const;
export type VideoResolution = (typeof VIDEO_RESOLUTIONS)[number];
export const VIDEO_PREFERENCES = ['balanced', 'cheapest', 'smartest'] as const;
export type VideoPreference = (typeof VIDEO_PREFERENCES)[number];

/** Limits (api-conventions.md, Limits). */
export const VIDEO_MIN_SECONDS = 1;
export const VIDEO_MAX_SECONDS = 60;

/** One model a video adapter serves: what it can make and what a second of it costs. */
export interface VideoModel {
  id: string;
  /** Coarse rank for `prefer: smartest` (higher is better), not a benchmark score. */
  quality: number;
  /** Micro-USD a second of video, per resolution it makes; a resolution absent is not offered. */
  price_per_second: Partial<Record<VideoResolution, number>>;
  aspects: VideoAspect[];
  /** Clip lengths the vendor makes, ascending: a request is rounded up to the next one. */
  durations: number[];
  /** The model animates a reference image and cannot start from text alone. */
  needs_image?: boolean;
}

/** What an adapter's `video.generate` carries besides invoke and price: its models. */
export interface VideoGenerateImpl extends CapabilityImpl<VideoSubmitInput, VideoSubmitOutput, VideoPlan, VideoUsage> {
  videoModels: VideoModel[];
}

/** A candidate's plan: the model, the clip length to ask for, and what a second costs. */
export interface VideoPlan {
  model: string;
  seconds: number;
  price_per_second: number;
}

/** The reference image, fetched by the area through the egress guard: its address and bytes. */
export interface VideoReferenceImage {
  url: string;
  content_type: string;
  /** Base64 of the bytes. */
  data: string;
}

/** What the caller asked for, as every vendor receives it. */
export interface VideoRequest {
  prompt: string;
  duration_seconds: number;
  aspect: VideoAspect;
  resolution: VideoResolution;
}

export interface VideoSubmitInput extends VideoRequest {
  /** Our job id: an adapter whose API takes an idempotency key or a client reference passes it. */
  job_id: string;
  reference_image?: VideoReferenceImage;
}

export interface VideoSubmitOutput {
  vendor_job_id: string;
}

/** What the settled price is computed from: the seconds of video made. */
export interface VideoUsage {
  seconds: number;
}

export interface VideoPollInput {
  vendor_job_id: string;
  job_id: string;
  model: string;
  /** The request again (without the image): an engine that lost its work may start it over. */
  request: VideoRequest & { seconds: number };
  credentials?: Record<string, string>;
}

export interface VideoAsset {
  data: Buffer;
  content_type: string;
}

export type VideoPollOutput =
  | { status: 'running'; progress?: number }
  | {
      status: 'succeeded';
      video: VideoAsset;
      thumbnail?: VideoAsset;
      /** Seconds of video made (billed up to the plan's). */
      seconds: number;
      /** A stand-in render (local-render), not a generated video. */
      placeholder?: boolean;
    }
  | { status: 'failed'; error: string };

export interface VideoCancelInput {
  vendor_job_id: string;
  credentials?: Record<string, string>;
}

export interface VideoCancelOutput {
  vendor_status: string;
}

export const VIDEO_CAPABILITIES = capabilities({
  // Not idempotent: a submit that timed out or failed after it was sent may have started a job
  // there (billed to the operator, nobody polling it); only one that never left goes elsewhere.
  'video.generate': capability<VideoSubmitInput, VideoSubmitOutput, VideoUsage>({
    idempotent: false,
    description: 'Submit a text-to-video job to a vendor.',
  }),
  'video.poll': capability<VideoPollInput, VideoPollOutput>({
    idempotent: true,
    description: 'Ask a vendor how a video job is going, and for its video once done.',
  }),
  'video.cancel': capability<VideoCancelInput, VideoCancelOutput>({
    idempotent: true,
    description: 'Ask a vendor to stop a video job (best effort).',
  }),
});

/** The clip length a model makes for a request: the shortest of its durations that covers it, or none. */
export function videoSeconds(model: VideoModel, asked: number): number | undefined {
  return model.durations.find((d) => d >= asked);
}

/** Micro-USD of a plan: its seconds before the job (the hold), the seconds made after (never more). */
export function videoPrice(plan: VideoPlan | undefined, usage?: VideoUsage): number {
  if (!plan) return 0;
  const seconds = usage ? Math.min(Math.max(0, usage.seconds), plan.seconds) : plan.seconds;
  return Math.ceil(seconds * plan.price_per_second);
}

/** Frame size in pixels of a resolution at an aspect (720p 16:9 is 1280×720, 9:16 is 720×1280). */
export function videoDimensions(resolution: VideoResolution, aspect: VideoAspect): { width: number; height: number } {
  const short = resolution === '720p' ? 720 : resolution === '1080p' ? 1080 : 2160;
  const long = Math.round((short * 16) / 9);
  if (aspect === '1:1') return { width: short, height: short };
  return aspect === '16:9' ? { width: long, height: short } : { width: short, height: long };
}

/** The models an instance's `video.generate` declares (none when it serves no video). */
export function videoModelsOf(impl: unknown): VideoModel[] {
  return (impl as Partial<VideoGenerateImpl> | undefined)?.videoModels ?? [];
}
