import {
  type Planned,
  type Planner,
  type RegisteredInstance,
  type VideoAspect,
  type VideoModel,
  type VideoPlan,
  type VideoPreference,
  type VideoResolution,
  videoModelsOf,
  videoSeconds,
} from '../../core/kit/area.js';

export const GENERATE = 'video.generate';

/** What a video request asks of a model, beside the router's pin, model and region. */
export interface VideoPlanInput {
  prefer: VideoPreference;
  resolution: VideoResolution;
  aspect: VideoAspect;
  duration_seconds: number;
  has_image: boolean;
}

export interface VideoCandidate extends Planned<VideoPlan> {
  plan: VideoPlan;
  quality: number;
}

/** The models an instance declares for video.generate. */
export function modelsOf(inst: RegisteredInstance): VideoModel[] {
  return videoModelsOf(inst.instance.capabilities[GENERATE]);
}

/** The model's plan for the request, or none when it cannot make what is asked. */
function fit(m: VideoModel, q: VideoPlanInput, model?: string): VideoCandidate | undefined {
  if (model && m.id !== model) return;
  const price = m.price_per_second[q.resolution];
  if (price === undefined || !m.aspects.includes(q.aspect)) return;
  if (m.needs_image && !q.has_image) return;
  const seconds = videoSeconds(m, q.duration_seconds);
  if (seconds === undefined) return;
  return { id: '', quality: m.quality, plan: { model: m.id, seconds, price_per_second: price } };
}

const cost = (c: VideoCandidate) => c.plan.seconds * c.plan.price_per_second;

/** Lower is better: price, quality, or price per point of quality (free engines last for quality). */
function rank(prefer: VideoPreference): (a: VideoCandidate, b: VideoCandidate) => number {
  if (prefer === 'cheapest') return (a, b) => cost(a) - cost(b) || b.quality - a.quality;
  if (prefer === 'smartest') return (a, b) => b.quality - a.quality || cost(a) - cost(b);
  const value = (c: VideoCandidate) => (cost(c) + 1) / Math.max(1, c.quality) ** 2;
  return (a, b) => value(a) - value(b);
}

/**
 * The video planner: each instance's best model for the request (resolution, aspect, length,
 * a reference image where the model needs one, the `model` asked for), then the instances in
 * the order `prefer` says
 * (the router then puts those on the caller's own keys first).
 */
export const videoPlanner: Planner<VideoPlanInput, VideoCandidate> = (req, candidates) => {
  const order = rank(req.request.prefer);
  return candidates
    .flatMap((c) => {
      const best = modelsOf(c.instance)
        .flatMap((m) => fit(m, req.request, req.model) ?? [])
        .sort(order)[0];
      return best ? [{ ...best, id: c.instance.id }] : [];
    })
    .sort(order);
};
