import { type VideoAspect, type VideoModel, type VideoResolution, usdMicros } from '../../core/kit/vendor.js';

// Sora through OpenAI's Videos API, priced a second as OpenAI lists them (USD → micro-USD).
// Sora makes no square clips; sora-2-pro alone makes the larger 1792×1024 size, sold as 1080p here.
export const OPENAI_VIDEO_MODELS: VideoModel[] = [
  {
    id: 'sora-2',
    quality: 70,
    price_per_second: { '720p': usdMicros(0.1) },
    aspects: ['16:9', '9:16'],
    durations: [4, 8, 12],
  },
  {
    id: 'sora-2-pro',
    quality: 90,
    price_per_second: { '720p': usdMicros(0.3), '1080p': usdMicros(0.5) },
    aspects: ['16:9', '9:16'],
    durations: [4, 8, 12],
  },
];

/** The `size` OpenAI takes for a resolution and aspect (width×height). */
export function soraSize(resolution: VideoResolution, aspect: VideoAspect): string {
  const [long, short] = resolution === '1080p' ? [1792, 1024] : [1280, 720];
  return aspect === '9:16' ? `${short}x${long}` : `${long}x${short}`;
}
