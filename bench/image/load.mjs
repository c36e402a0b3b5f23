// The image bench's inputs and load: noise JPEGs, one call through undici or the raw client,
// and loops that time calls and the CPU they cost.
import sharp from 'sharp';

/**
 * A JPEG of Gaussian noise, so decoding and encoding do real work (a flat image compresses to
 * nothing). `grain` > 1 makes the noise at 1/grain the size and scales it up: the 40-MP input
 * stays a few MB (its base64 must fit the 25 MiB body cap) while every pixel is still decoded.
 */
export async function noiseJpeg(width, height, grain = 1) {
  const w = Math.ceil(width / grain);
  const h = Math.ceil(height / grain);
  let img = sharp({ create: { width: w, height: h, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 40 } } });
  if (grain > 1) img = sharp(await img.png().toBuffer()).resize(width, height, { fit: 'fill' });
  return img.jpeg({ quality: 90 }).toBuffer();
}

/** POST one process call; throws on anything but a 200 with an image_url. */
export async function post(pool, key, { body, type }) {
  const res = await pool.request({
    method: 'POST',
    path: '/v1/image/process',
    body,
    headers: { 'content-type': type, authorization: `Bearer ${key}` },
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`/v1/image/process answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The same call on a connection of the raw client (throughput: see bench/core/raw-client.mjs). */
export async function postRaw(conn, request) {
  const res = await conn.send(request);
  const text = res.body.toString('utf8');
  if (res.status !== 200) throw new Error(`/v1/image/process answered ${res.status}: ${text.slice(0, 300)}`);
  const out = JSON.parse(text);
  if (typeof out.image_url !== 'string') throw new Error(`no image_url in ${text.slice(0, 300)}`);
  return out;
}

/** `n` loops calling `once(loop)` until `seconds` pass; returns how many calls completed and each one's time. */
export async function loops(n, seconds, once) {
  const end = performance.now() + seconds * 1000;
  const times = [];
  await Promise.all(
    Array.from({ length: n }, async (_, loop) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await once(loop);
        times.push(performance.now() - t0);
      }
    })
  );
  return times;
}

/** Images a second and CPU per image (ms) of `cpu()` over one timed run of `n` loops. */
export async function throughput(n, seconds, once, cpu) {
  const c0 = cpu();
  const t0 = performance.now();
  const times = await loops(n, seconds, once);
  const wall = (performance.now() - t0) / 1000;
  return { rate: times.length / wall, cpuMs: ((cpu() - c0) * 1000) / Math.max(1, times.length) };
}

export const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
