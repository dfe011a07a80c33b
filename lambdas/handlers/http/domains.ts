// HTTP handlers for /v1/domains: add (with the DNS records to publish), list, read, verify, delete.
import * as z from 'zod';
import { createDomain, type DomainDeps, deleteDomain, getDomain, verifyDomain } from '../../app/domains/domains';
import type { Domain } from '../../app/domains/ports';
import { PLANS } from '../../domain/plans';
import { isDomainName } from '../../domain/resources';
import { type RequestSchemas, type RouteHandler, tenantOf } from './context';
import { json } from './response';
import { validate } from './validate';

const createBody = z.strictObject({
  name: z.string().trim().toLowerCase().refine(isDomainName, 'Must be a domain name such as mail.example.com.'),
});

export function domainView(domain: Domain) {
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
    json(
      201,
      domainView(
        await createDomain(deps, tenantOf(caller), validate(createBody, body ?? {}).name, {
          limit: PLANS[caller.plan].domainsPerMode,
        }),
      ),
    );
  const list: RouteHandler = async ({ caller }) =>
    json(200, { object: 'list', data: (await deps.domains.list(tenantOf(caller))).map(domainView) });
  const get: RouteHandler = async ({ caller, params }) =>
    json(200, domainView(await getDomain(deps, tenantOf(caller), params.id ?? '')));
  const verify: RouteHandler = async ({ caller, params }) =>
    json(200, domainView(await verifyDomain(deps, tenantOf(caller), params.id ?? '')));
  const remove: RouteHandler = async ({ caller, params }) => {
    const domain = await deleteDomain(deps, tenantOf(caller), params.id ?? '');
    return json(200, { object: 'domain', id: domain.id, deleted: true });
  };
  return { createDomain: create, listDomains: list, getDomain: get, verifyDomain: verify, deleteDomain: remove };
}

export const requestSchemas: RequestSchemas = { createDomain: { body: createBody } };
