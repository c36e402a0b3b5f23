import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { decodeCursor, ListQuery, Page, pageOf, type ListQueryT } from '../../core/kit/area.js';
import {
  Deleted,
  DomainBody,
  DomainParams,
  DomainRecord,
  EmailParams,
  SuppressBody,
  SuppressionRecord,
  TemplateBody,
  TemplateParams,
  TemplateRecord,
  type SuppressBodyT,
  type TemplateBodyT,
} from './schemas.js';
import type { DomainStore } from './domains.js';
import type { SuppressionStore } from './suppressions.js';
import { wireTemplate, type EmailTemplates } from './templates.js';

const tags = ['email'];
type Acct = FastifyRequest;
const acct = (req: Acct) => req.principal!.accountId;

/** Domains, the suppression list and templates: what a send is checked against and built from. */
export function registerEmailSetupRoutes(
  app: FastifyInstance,
  domains: DomainStore,
  suppressions: SuppressionStore,
  templates: EmailTemplates
): void {
  app.post(
    '/v1/email/domains/verify',
    {
      config: { scope: 'email', operation: 'email.domains.verify' },
      schema: {
        summary: 'Add a sending domain (first call) and check its DKIM, SPF and DMARC records in DNS',
        tags,
        body: DomainBody,
        response: { 200: DomainRecord },
      },
    },
    async (req: FastifyRequest<{ Body: { domain: string } }>) => domains.verify(acct(req), req.body.domain)
  );
  app.get(
    '/v1/email/domains',
    {
      config: { scope: 'email:read', operation: 'email.domains.list' },
      schema: { summary: 'Sending domains', tags, response: { 200: Type.Object({ items: Type.Array(DomainRecord) }) } },
    },
    async (req: Acct) => ({ items: await domains.list(acct(req)) })
  );
  app.delete(
    '/v1/email/domains/:domain',
    {
      config: { scope: 'email', operation: 'email.domains.delete', errors: ['not_found'] },
      schema: {
        summary: 'Remove a sending domain and its key',
        tags,
        params: DomainParams,
        response: { 200: Deleted },
      },
    },
    async (req: FastifyRequest<{ Params: { domain: string } }>) => {
      await domains.remove(acct(req), req.params.domain);
      return { ok: true };
    }
  );

  app.post(
    '/v1/email/suppress',
    {
      config: { scope: 'email', operation: 'email.suppress' },
      schema: {
        summary: 'Add an address to the suppression list',
        tags,
        body: SuppressBody,
        response: { 200: SuppressionRecord },
      },
    },
    async (req: FastifyRequest<{ Body: SuppressBodyT }>) =>
      suppressions.add(acct(req), req.body.email, req.body.reason ?? 'manual')
  );
  app.get(
    '/v1/email/suppress',
    {
      config: { scope: 'email:read', operation: 'email.suppress.list' },
      schema: {
        summary: 'The suppression list, newest first',
        tags,
        querystring: ListQuery,
        response: { 200: Page(SuppressionRecord) },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const { limit, cursor } = req.query;
      const rows = await suppressions.list(acct(req), limit + 1, decodeCursor(cursor));
      return pageOf(rows, limit, (r) => ({ t: Number(r.created_at), id: r.email }), suppressions.wire);
    }
  );
  app.delete(
    '/v1/email/suppress/:email',
    {
      config: { scope: 'email', operation: 'email.suppress.delete', errors: ['not_found'] },
      schema: {
        summary: 'Remove an address from the suppression list',
        tags,
        params: EmailParams,
        response: { 200: Deleted },
      },
    },
    async (req: FastifyRequest<{ Params: { email: string } }>) => {
      await suppressions.remove(acct(req), req.params.email);
      return { ok: true };
    }
  );

  app.post(
    '/v1/email/templates',
    {
      config: { scope: 'email', operation: 'email.templates.create', errors: ['payload_too_large'] },
      schema: {
        summary: 'Save an email template (mustache)',
        tags,
        body: TemplateBody,
        response: { 200: TemplateRecord },
      },
    },
    async (req: FastifyRequest<{ Body: TemplateBodyT }>) => templates.create(acct(req), req.body)
  );
  app.get(
    '/v1/email/templates',
    {
      config: { scope: 'email:read', operation: 'email.templates.list' },
      schema: {
        summary: 'Email templates, newest first',
        tags,
        querystring: ListQuery,
        response: { 200: Page(TemplateRecord) },
      },
    },
    async (req: FastifyRequest<{ Querystring: ListQueryT }>) => {
      const { limit, cursor } = req.query;
      const rows = await templates.list(acct(req), limit + 1, decodeCursor(cursor));
      return pageOf(rows, limit, (r) => ({ t: Number(r.created_at), id: r.template_id }), wireTemplate);
    }
  );
  app.get(
    '/v1/email/templates/:template_id',
    {
      config: { scope: 'email:read', operation: 'email.templates.get', errors: ['not_found'] },
      schema: { summary: 'One email template', tags, params: TemplateParams, response: { 200: TemplateRecord } },
    },
    async (req: FastifyRequest<{ Params: { template_id: string } }>) =>
      wireTemplate(await templates.get(acct(req), req.params.template_id))
  );
  app.put(
    '/v1/email/templates/:template_id',
    {
      config: { scope: 'email', operation: 'email.templates.update', errors: ['not_found', 'payload_too_large'] },
      schema: {
        summary: 'Replace an email template',
        tags,
        params: TemplateParams,
        body: TemplateBody,
        response: { 200: TemplateRecord },
      },
    },
    async (req: FastifyRequest<{ Params: { template_id: string }; Body: TemplateBodyT }>) =>
      templates.update(acct(req), req.params.template_id, req.body)
  );
  app.delete(
    '/v1/email/templates/:template_id',
    {
      config: { scope: 'email', operation: 'email.templates.delete', errors: ['not_found'] },
      schema: { summary: 'Delete an email template', tags, params: TemplateParams, response: { 200: Deleted } },
    },
    async (req: FastifyRequest<{ Params: { template_id: string } }>) => {
      await templates.remove(acct(req), req.params.template_id);
      return { ok: true };
    }
  );
}
