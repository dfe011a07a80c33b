// HTTP handlers for /v1/domains: add (with the DNS records to publish), list, read, change tracking and
// capabilities, verify, delete.
import * as z from 'zod';
import {
  createDomain,
  type DomainDeps,
  deleteDomain,
  getDomain,
  updateDomainCapabilities,
  updateDomainTracking,
  verifyDomain,
} from '../../app/domains/domains';
import { CAPABILITY_STATES, DEFAULT_CAPABILITIES, DOMAIN_STATUSES, type Domain } from '../../app/domains/ports';
import { PLANS } from '../../domain/plans';
import { isDomainName } from '../../domain/resources';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { type Body, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const openTracking = z
  .boolean()
  .meta({ description: 'SES adds a tracking pixel to emails from this domain (email.opened). Default false.' });
const clickTracking = z
  .boolean()
  .meta({ description: 'SES rewrites the links of emails from this domain (email.clicked). Default false.' });

/**
 * A field Resend's API has and Sendflow does not support: named in the schema (so the 422 says why rather than
 * "unrecognized key"), refused whenever it is given. Resend's SDK drops the fields a caller leaves undefined.
 */
const unsupported = (why: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (value !== undefined) ctx.addIssue({ code: 'custom', message: why });
    })
    .optional()
    .meta({ description: `Not supported: ${why}` });

/** SES delivers with TLS when the receiving server offers it: Resend's "opportunistic", the one value taken. */
const tls = z
  .enum(['opportunistic'], {
    error: 'Only "opportunistic" is supported: SES uses TLS whenever the receiving server offers it.',
  })
  .optional()
  .meta({ description: 'Resend\'s TLS mode; only "opportunistic" (SES\'s behaviour) is taken.' });

const trackingSubdomain = unsupported(
  "Opens and clicks are tracked through SES's default tracking domain; a custom tracking domain is not supported.",
);

const capabilityState = z.enum(CAPABILITY_STATES);
const capabilities = z.strictObject({ sending: capabilityState, receiving: capabilityState }).meta({
  description:
    'What the domain is used for. Default sending enabled, receiving disabled. Receiving (live mode only) adds ' +
    'the MX record to `records`; a verified domain then receives mail for any address at it (docs/inbound.md).',
});
const capabilitiesChange = z.strictObject({
  sending: capabilityState.optional(),
  receiving: capabilityState.optional(),
});

const createBody = z.strictObject({
  name: z.string().trim().toLowerCase().refine(isDomainName, 'must be a domain name such as mail.example.com.'),
  open_tracking: openTracking.optional(),
  click_tracking: clickTracking.optional(),
  region: unsupported('Sendflow sends from the AWS region it is deployed in; leave region out.'),
  custom_return_path: unsupported(
    "A custom MAIL FROM (return path) is not supported: mail is sent with SES's default MAIL FROM domain.",
  ),
  tls,
  tracking_subdomain: trackingSubdomain,
  capabilities: capabilitiesChange.optional(),
});

const updateBody = z
  .strictObject({
    open_tracking: openTracking.optional(),
    click_tracking: clickTracking.optional(),
    tls,
    tracking_subdomain: trackingSubdomain,
    capabilities: capabilitiesChange.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'Give at least one of open_tracking, click_tracking, capabilities.');

const domainSchema = named(
  'Domain',
  z.strictObject({
    object: z.literal('domain'),
    id: z.string(),
    name: z.string(),
    status: z.enum(DOMAIN_STATUSES),
    records: z
      .array(
        z.strictObject({
          record: z.enum(['DKIM', 'Receiving']).meta({
            description: "What the record is for, in Resend's words: DKIM (SES Easy DKIM), Receiving (the MX record).",
          }),
          type: z.enum(['CNAME', 'TXT', 'MX']),
          name: z.string(),
          value: z.string(),
          priority: z.number().int().optional().meta({ description: 'MX records: the preference.' }),
          ttl: z.literal('Auto').meta({ description: 'Any TTL works: Sendflow names none.' }),
          status: z.enum(['pending', 'verified', 'failed', 'not_started']).meta({
            description:
              "DKIM records: the domain's status (SES verifies them together). The MX record: not_started, " +
              'since Sendflow does not look it up (mail arrives once it is published).',
          }),
        }),
      )
      .meta({ description: 'The DNS records to publish.' }),
    open_tracking: openTracking,
    click_tracking: clickTracking,
    capabilities,
    created_at: isoTime,
    updated_at: isoTime,
  }),
);

const responses = {
  createDomain: success(201, domainSchema, 'The domain, with the DNS records to publish'),
  listDomains: success(
    200,
    named(
      'DomainList',
      z.strictObject({
        object: z.literal('list'),
        has_more: z.literal(false).meta({ description: 'Every domain is on the one page.' }),
        data: z.array(domainSchema),
      }),
    ),
    'Every domain',
  ),
  getDomain: success(200, domainSchema, 'The domain'),
  updateDomain: success(200, domainSchema, 'The domain with its tracking or capabilities changed'),
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
    records: domain.records.map((record) => ({
      record: record.type === 'MX' ? ('Receiving' as const) : ('DKIM' as const),
      ...record,
      ttl: 'Auto' as const,
      status: record.type === 'MX' ? ('not_started' as const) : domain.status,
    })),
    open_tracking: domain.openTracking ?? false,
    click_tracking: domain.clickTracking ?? false,
    capabilities: domain.capabilities ?? DEFAULT_CAPABILITIES,
    created_at: domain.createdAt,
    updated_at: domain.updatedAt,
  };
}

/** The capabilities a request names (zod leaves absent keys absent; this keeps the types exact). */
function definedOnly(change: z.infer<typeof capabilitiesChange>) {
  return {
    ...(change.sending ? { sending: change.sending } : {}),
    ...(change.receiving ? { receiving: change.receiving } : {}),
  };
}

export function domainHandlers(deps: DomainDeps) {
  const create: RouteHandler = async ({ caller, body }) => {
    const request = validate(createBody, body ?? {}, 'body', { region: 'invalid_region' });
    const domain = await createDomain(deps, tenantOf(caller), request.name, {
      limit: PLANS[caller.plan].domainsPerMode,
      ...(request.open_tracking !== undefined ? { openTracking: request.open_tracking } : {}),
      ...(request.click_tracking !== undefined ? { clickTracking: request.click_tracking } : {}),
      ...(request.capabilities ? { capabilities: definedOnly(request.capabilities) } : {}),
    });
    return reply(responses.createDomain, domainView(domain));
  };
  const update: RouteHandler = async ({ caller, params, body }) => {
    const request = validate(updateBody, body ?? {});
    let domain = await updateDomainTracking(deps, tenantOf(caller), params.id ?? '', {
      ...(request.open_tracking !== undefined ? { openTracking: request.open_tracking } : {}),
      ...(request.click_tracking !== undefined ? { clickTracking: request.click_tracking } : {}),
    });
    if (request.capabilities) {
      domain = await updateDomainCapabilities(deps, tenantOf(caller), domain.id, definedOnly(request.capabilities));
    }
    return reply(responses.updateDomain, domainView(domain));
  };
  const list: RouteHandler = async ({ caller }) =>
    reply(responses.listDomains, {
      object: 'list',
      has_more: false,
      data: (await deps.domains.list(tenantOf(caller))).map(domainView),
    });
  const get: RouteHandler = async ({ caller, params }) =>
    reply(responses.getDomain, domainView(await getDomain(deps, tenantOf(caller), params.id ?? '')));
  const verify: RouteHandler = async ({ caller, params }) =>
    reply(responses.verifyDomain, domainView(await verifyDomain(deps, tenantOf(caller), params.id ?? '')));
  const remove: RouteHandler = async ({ caller, params }) => {
    const domain = await deleteDomain(deps, tenantOf(caller), params.id ?? '');
    return reply(responses.deleteDomain, { object: 'domain', id: domain.id, deleted: true });
  };
  return {
    createDomain: create,
    listDomains: list,
    getDomain: get,
    updateDomain: update,
    verifyDomain: verify,
    deleteDomain: remove,
  };
}

export const requestSchemas: RequestSchemas = {
  createDomain: { body: createBody },
  updateDomain: { body: updateBody },
};
export const responseSchemas: ResponseSchemas = responses;
