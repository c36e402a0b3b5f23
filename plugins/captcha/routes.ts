import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SiteKeyStore } from './site-keys.js';
import {
  CaptchaVerifyResult,
  VerifyBody,
  WidgetBody,
  WidgetResult,
  type VerifyBodyT,
  type WidgetBodyT,
} from './schemas.js';
import { SERVICE, type CaptchaVerifier } from './verify.js';
import { widgetFor } from './widgets.js';

/** POST /v1/captcha/verify and /v1/captcha/widgets, the spec's two operations. */
export function registerCaptchaRoutes(app: FastifyInstance, verifier: CaptchaVerifier, keys: SiteKeyStore): void {
  app.post(
    '/v1/captcha/verify',
    {
      config: {
        scope: 'captcha',
        operation: 'captcha.verify',
        capability: 'captcha.verify',
        errors: ['not_found', 'no_vendor_available'],
      },
      schema: {
        summary: "Verify a captcha widget's token (valid: false, with a reason, when it is not a human's)",
        tags: ['captcha'],
        body: VerifyBody,
        response: { 200: CaptchaVerifyResult },
      },
    },
    async (req: FastifyRequest<{ Body: VerifyBodyT }>) => verifier.verify(req, req.body)
  );

  app.post(
    '/v1/captcha/widgets',
    {
      config: { scope: 'captcha', operation: 'captcha.widgets', errors: ['not_found', 'no_vendor_available'] },
      schema: {
        summary: 'The element and script a page needs for a captcha widget',
        tags: ['captcha'],
        body: WidgetBody,
        response: { 200: WidgetResult },
      },
    },
    async (req: FastifyRequest<{ Body: WidgetBodyT }>) => {
      const p = req.principal!;
      const [inst] = app.svc.router.candidates('captcha.verify', {
        vendor: req.body.vendor ?? SERVICE,
        region: p.region,
      });
      const site = req.body.site_key_id
        ? await keys.get(p.accountId, req.body.site_key_id)
        : await keys.first(p.accountId);
      return { ...widgetFor(app.svc, inst.id, inst.adapter, site), site_key_id: site.site_key_id, vendor: inst.id };
    }
  );
}
