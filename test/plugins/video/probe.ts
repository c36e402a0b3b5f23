import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';

const run = promisify(execFile);

/** Download a result URL through the gateway (the result store serves it). */
export async function download(app: FastifyInstance, url: string): Promise<{ body: Buffer; type: string }> {
  const u = new URL(url);
  const res = await app.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers: { host: u.host } });
  if (res.statusCode !== 200) throw new Error(`GET ${u.pathname}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  return { body: res.rawPayload, type: String(res.headers['content-type']) };
}

/** What ffprobe reads of an MP4: its duration in seconds and its first video stream's size. */
export async function probe(dir: string, bytes: Buffer): Promise<{ duration: number; width: number; height: number }> {
  const file = join(dir, `probe-${Math.random().toString(36).slice(2)}.mp4`);
  writeFileSync(file, bytes);
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'format=duration:stream=width,height,codec_name',
    '-of',
    'json',
    file,
  ]);
  const j = JSON.parse(stdout);
  return { duration: Number(j.format.duration), width: j.streams[0].width, height: j.streams[0].height };
}
