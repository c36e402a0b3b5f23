import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type VideoAspect, type VideoResolution, videoDimensions } from '../../core/kit/vendor.js';
import { runFfmpeg } from './ffmpeg.js';

export interface RenderSpec {
  prompt: string;
  seconds: number;
  aspect: VideoAspect;
  resolution: VideoResolution;
  /** The reference image's file, when the request had one. */
  image?: string;
}

export interface RenderSettings {
  ffmpeg: string;
  fps: number;
  timeoutMs: number;
}

export const VIDEO_FILE = 'video.mp4';
export const THUMBNAIL_FILE = 'thumbnail.jpg';

/** The prompt in lines that fit the card (about 28 characters a line at the card's font size), at most 8. */
export function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.replace(/\s+/g, ' ').trim().split(' ')) {
    const w = word.length > width ? `${word.slice(0, width - 1)}…` : word;
    if (line && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines.length > 8 ? [...lines.slice(0, 7), `${lines[7]}…`].join('\n') : lines.join('\n');
}

/** A path inside a filter graph: `\`, `:` and `'` escaped as the graph's parser wants them. */
const graphPath = (p: string) => p.replace(/[\\:']/g, (c) => `\\${c}`);

/**
 * The ffmpeg arguments of a placeholder: a title card of the prompt (and a "placeholder render"
 * line), then the reference image filling the frame with a slow zoom and pan across it, at the
 * asked size and length, H.264 in an MP4 that plays while it downloads.
 */
function videoArgs(dir: string, spec: RenderSpec, fps: number): string[] {
  const { width: w, height: h } = videoDimensions(spec.resolution, spec.aspect);
  const titleSeconds = spec.image ? Math.min(2, spec.seconds / 2) : spec.seconds;
  const size = Math.round(Math.min(w, h) / 15);
  const font = 'font=DejaVu Sans';
  const card =
    `[0:v]drawtext=textfile=${graphPath(join(dir, 'title.txt'))}:${font}:fontcolor=white:fontsize=${size}`
    + `:line_spacing=${Math.round(size / 3)}:x=(w-text_w)/2:y=(h-text_h)/2,`
    + `drawtext=text=placeholder render:${font}:fontcolor=0x94a3b8:fontsize=${Math.round(size / 2)}`
    + `:x=(w-text_w)/2:y=h-${size * 2},setsar=1`;
  const args = ['-f', 'lavfi', '-i', `color=c=0x111827:s=${w}x${h}:r=${fps}:d=${titleSeconds}`];
  let graph = card;
  if (spec.image) {
    const frames = Math.max(1, Math.round((spec.seconds - titleSeconds) * fps));
    args.push('-loop', '1', '-framerate', String(fps), '-t', String(spec.seconds - titleSeconds), '-i', spec.image);
    graph +=
      `[card];[1:v]scale=${w}:${h}:force_original_aspect_ratio=increase,crop=${w}:${h},`
      + `zoompan=z='1+0.2*on/${frames}':x='(iw-iw/zoom)*on/${frames}':y='(ih-ih/zoom)/2'`
      + `:d=1:s=${w}x${h}:fps=${fps},setsar=1[pan];[card][pan]concat=n=2:v=1:a=0`;
  }
  graph += ',format=yuv420p[v]';
  return [
    ...args,
    '-filter_complex',
    graph,
    '-map',
    '[v]',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-r',
    String(fps),
    '-t',
    String(spec.seconds),
    '-movflags',
    '+faststart',
    join(dir, `partial-${VIDEO_FILE}`),
  ];
}

/** Render the placeholder and its thumbnail (a frame from the image part, else the card) into `dir`. */
export async function renderPlaceholder(
  dir: string,
  spec: RenderSpec,
  s: RenderSettings,
  signal: AbortSignal
): Promise<void> {
  await writeFile(join(dir, 'title.txt'), wrap(spec.prompt, 28));
  await runFfmpeg(s.ffmpeg, videoArgs(dir, spec, s.fps), signal, s.timeoutMs);
  const at = spec.image ? Math.min(spec.seconds - 0.1, Math.min(2, spec.seconds / 2) + 0.5) : spec.seconds / 2;
  const still = ['-ss', at.toFixed(2), '-i', join(dir, `partial-${VIDEO_FILE}`), '-frames:v', '1', '-q:v', '3'];
  await runFfmpeg(s.ffmpeg, [...still, join(dir, THUMBNAIL_FILE)], signal, s.timeoutMs);
}
