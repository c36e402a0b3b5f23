import { type RegisteredInstance, type Svc, type VideoModel, apiError } from '../../core/kit/area.js';
import { GENERATE, modelsOf } from './planner.js';
import type { StoredRequest } from './store.js';

/** The router's selection: a pinned vendor, a model, the account's region. */
export interface Selection {
  vendor?: string;
  model?: string;
  region?: string;
}

interface Gate {
  param: 'reference_image_url' | 'resolution' | 'aspect' | 'duration_seconds';
  /** What is asked that no model makes (the message's subject), unless `missing` says it. */
  what?: string;
  offers: (m: VideoModel) => boolean;
  /** The first sentence when the request lacks something rather than asks too much: what to add. */
  missing?: (asked: string) => string;
}

function gates(r: StoredRequest): Gate[] {
  return [
    {
      // Image-to-video models (Runway's gen4_turbo) cannot start from text alone.
      param: 'reference_image_url',
      offers: (m) => !m.needs_image || r.reference_image_url !== undefined,
      missing: (asked) =>
        `reference_image_url is required by ${asked}: it animates an image and cannot start from text alone.`,
    },
    { param: 'resolution', what: r.resolution, offers: (m) => m.price_per_second[r.resolution] !== undefined },
    { param: 'aspect', what: `aspect ${r.aspect}`, offers: (m) => m.aspects.includes(r.aspect) },
    {
      param: 'duration_seconds',
      what: `${r.duration_seconds} s`,
      offers: (m) => (m.durations.at(-1) ?? 0) >= r.duration_seconds,
    },
  ];
}

/**
 * A request that no vendor it may go to can make (4k where only 720p is served, a minute where
 * clips end at 10 s, text alone where every model animates an image) is the caller's to change,
 * not an outage: 422 naming what to change or add, and the configured vendors that do make it,
 * so the caller can pin one. Checked before anything is fetched or charged.
 */
export function assertOffered(svc: Svc, sel: Selection, request: StoredRequest): void {
  const pool = svc.router.candidates(GENERATE, sel);
  const models = (i: RegisteredInstance) => modelsOf(i).filter((m) => !sel.model || m.id === sel.model);
  let kept = pool;
  for (const g of gates(request)) {
    kept = kept.filter((i) => models(i).some(g.offers));
    if (kept.length) continue;
    const offering = svc.vendors
      .configured(GENERATE)
      .filter((i) => !i.byokOnly && modelsOf(i).some(g.offers))
      .map((i) => i.id);
    const asked = sel.vendor ? `vendor "${sel.vendor}"` : 'the vendors this request may go to';
    const model = sel.model ? ` with model "${sel.model}"` : '';
    const who = offering.length
      ? `${g.missing ? 'Without one it' : 'It'} is offered by: ${offering.join(', ')} (pin one with \`vendor\`).`
      : 'No configured vendor offers it (docs/video.md lists which do).';
    const lead = g.missing?.(`${asked}${model}`) ?? `${g.what} is not offered by ${asked}${model}.`;
    throw apiError('unprocessable', `${lead} ${who}`, {
      param: g.param,
      details: { vendors: offering },
    });
  }
}
