import type { FastifyInstance, FastifyRequest } from 'fastify';
import { decodeCursor, ListQuery, Page, pageOf, type ListQueryT } from '../../core/kit/area.js';
import { Deleted, Template, TemplateBody, TemplateParams, type TemplateBodyT } from './schemas.js';
import { wire, type TemplateStore } from './templates.js';

type ById = FastifyRequest<{ Params: { template_id: string } }>;

/** POST/GET/DELETE /v1/pdf/templates: an account's own HTML templates for generate. */
export function registerTemplateRoutes(app: FastifyInstance, store: TemplateStore): void {
  app.post(
    '/v1/pdf/templates',
    {
      config: { scope: 'pdf', operation: 'pdf.templates.create', errors: ['payload_too_large'] },
      schema: {
        summary: 'Save an HTML template (mustache tags) for POST /v1/pdf/generate',
        tags: ['pdf'],
        body: TemplateBody,
        response: { 200: Template },
      },
    },
    async (req: FastifyRequest<{ Body: TemplateBodyT }>) =>
      store.create(req.principal!.accountId, req.body.name, req.body.html)
  );

  app.get(
    '/v1/pdf/templates',
    {
      config: { scope: 'pdf:read', operation: 'pdf.templates.list' },
      schema: {
        summary: 'List your PDF templates, newest first',
        tags: ['pdf'],
        querystring: ListQuery,
        response: { 200: Page(Template) },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const { limit, cursor } = req.query;
      const rows = await store.list(req.principal!.accountId, limit + 1, decodeCursor(cursor));
      return pageOf(rows, limit, (r) => ({ t: Number(r.created_at), id: r.template_id }), wire);
    }
  );

  app.get(
    '/v1/pdf/templates/:template_id',
    {
      config: { scope: 'pdf:read', operation: 'pdf.templates.get', errors: ['not_found'] },
      schema: { summary: 'One PDF template', tags: ['pdf'], params: TemplateParams, response: { 200: Template } },
    },
    async (req: ById) => wire(await store.get(req.principal!.accountId, req.params.template_id))
  );

  app.delete(
    '/v1/pdf/templates/:template_id',
    {
      config: { scope: 'pdf', operation: 'pdf.templates.delete', errors: ['not_found'] },
      schema: { summary: 'Delete a PDF template', tags: ['pdf'], params: TemplateParams, response: { 200: Deleted } },
    },
    async (req: ById) => {
      await store.remove(req.principal!.accountId, req.params.template_id);
      return { ok: true };
    }
  );
}
