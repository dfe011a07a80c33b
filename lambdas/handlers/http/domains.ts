// HTTP handlers for /v1/domains: add (with the DNS records to publish), list, read, verify, delete.
import * as z from 'zod';
import { createDomain, type DomainDeps, deleteDomain, getDomain, verifyDomain } from '../../app/domains/domains';
import { DOMAIN_STATUSES, type Domain } from '../../app/domains/ports';
import { PLANS } from '../../domain/plans';
import { isDomainName } from '../../domain/resources';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { type Body, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const createBody = z.strictObject({
  name: z.string().trim().toLowerCase().refine(isDomainName, 'Must be a domain name such as mail.example.com.'),
});

const domainSchema = named(
  'Domain',
  z.strictObject({
    object: z.literal('domain'),
    id: z.string(),
    name: z.string(),
    status: z.enum(DOMAIN_STATUSES),
    records: z
      .array(z.strictObject({ type: z.enum(['CNAME', 'TXT', 'MX']), name: z.string(), value: z.string() }))
      .meta({ description: 'The DNS records to publish.' }),
    created_at: isoTime,
    updated_at: isoTime,
  }),
);

const responses = {
  createDomain: success(201, domainSchema, 'The domain, with the DNS records to publish'),
  listDomains: success(
    200,
    named('DomainList', z.strictObject({ object: z.literal('list'), data: z.array(domainSchema) })),
    'Every domain',
  ),
  getDomain: success(200, domainSchema, 'The domain'),
  verifyDomain: success(200, domainSchema, 'The domain after the check'),
  deleteDomain: success(
    200,
    named('DomainDeleted', z.strictObject({ object: z.literal('domain'), id: z.string(), deleted: z.literal(true) })),
    'Deleted',
  ),
} as const;

export function domainView(domain: Domain): Body<typeof domainSchema> {
  return {
    object: 'domain',
    id: domain.id,
    name: domain.name,
    status: domain.status,
    records: domain.records,
    created_at: domain.createdAt,
    updated_at: domain.updatedAt,
  };
}

export function domainHandlers(deps: DomainDeps) {
  const create: RouteHandler = async ({ caller, body }) =>
    reply(
      responses.createDomain,
      domainView(
        await createDomain(deps, tenantOf(caller), validate(createBody, body ?? {}).name, {
          limit: PLANS[caller.plan].domainsPerMode,
        }),
      ),
    );
  const list: RouteHandler = async ({ caller }) =>
    reply(responses.listDomains, { object: 'list', data: (await deps.domains.list(tenantOf(caller))).map(domainView) });
  const get: RouteHandler = async ({ caller, params }) =>
    reply(responses.getDomain, domainView(await getDomain(deps, tenantOf(caller), params.id ?? '')));
  const verify: RouteHandler = async ({ caller, params }) =>
    reply(responses.verifyDomain, domainView(await verifyDomain(deps, tenantOf(caller), params.id ?? '')));
  const remove: RouteHandler = async ({ caller, params }) => {
    const domain = await deleteDomain(deps, tenantOf(caller), params.id ?? '');
    return reply(responses.deleteDomain, { object: 'domain', id: domain.id, deleted: true });
  };
  return { createDomain: create, listDomains: list, getDomain: get, verifyDomain: verify, deleteDomain: remove };
}

export const requestSchemas: RequestSchemas = { createDomain: { body: createBody } };
export const responseSchemas: ResponseSchemas = responses;
