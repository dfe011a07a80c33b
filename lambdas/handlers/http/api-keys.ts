// HTTP handlers for /v1/api-keys: parse → use case → response. The secret appears only in the 201. A key made
// here lists what it may do (spec §5.5): `scopes`, or Resend's `permission` (full or sending access). `{name}`
// alone, which Resend takes as full access, is a 422 here: the spec wins (docs/resend.md).
import * as z from 'zod';
import { type CreateApiKeyDeps, createApiKey, listApiKeys, revokeApiKey } from '../../app/api-keys';
import type { ApiKey } from '../../app/ports';
import { MODES } from '../../domain/api-keys';
import { PERMISSIONS, permissionOf, SCOPES, type Scope, scopesOfPermission } from '../../domain/scopes';
import type { RequestSchemas, ResponseSchemas, RouteHandler } from './context';
import { type Body, isoTime, named, reply, success } from './response';
import { validate } from './validate';

/** `{name}` alone: a key made through the API must say what it may do (spec §5.5). */
const SAY_WHAT_IT_MAY_DO = `is required, or \`permission\`: a key created through the API lists what it may do. Give \`scopes\` (some of ${SCOPES.join(', ')}) or \`permission\` ("full_access" or "sending_access").`;

const createBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional(),
    scopes: z
      .array(z.enum(SCOPES))
      .min(1, 'must list at least one scope.')
      .optional()
      .meta({ description: 'What the key may do. Give scopes or permission (one of them is required).' }),
    permission: z
      .enum(PERMISSIONS, { error: 'must be "full_access" or "sending_access".' })
      .optional()
      .meta({ description: "Resend's alternative to scopes: full_access = every scope, sending_access = email:send." }),
    domain_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: 'With permission sending_access: the key may send only from this domain.' }),
  })
  .superRefine((body, ctx) => {
    if (body.scopes === undefined && body.permission === undefined)
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: SAY_WHAT_IT_MAY_DO });
    if (body.scopes !== undefined && body.permission !== undefined)
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'Give `scopes` or `permission`, not both.' });
    if (body.domain_id !== undefined && body.permission !== 'sending_access')
      ctx.addIssue({ code: 'custom', path: ['domain_id'], message: 'needs `permission: "sending_access"`.' });
  });

/** The scopes a create asks for: its scopes or its permission's (the schema requires one of them). */
function requestedScopes(body: z.output<typeof createBody>): Scope[] {
  if (body.scopes) return body.scopes;
  return scopesOfPermission(body.permission ?? 'sending_access');
}

const apiKeySchema = named(
  'ApiKey',
  z.strictObject({
    object: z.literal('api_key'),
    id: z.string(),
    name: z.string(),
    mode: z.enum(MODES),
    scopes: z.array(z.enum(SCOPES)),
    permission: z.enum([...PERMISSIONS, 'custom']).meta({
      description: "What the scopes amount to in Resend's terms; custom for any other set of scopes.",
    }),
    domain_id: z
      .string()
      .nullable()
      .meta({ description: 'The one domain a restricted sending key may send from; null: any.' }),
    hint: z.string().meta({ description: 'Which key this is, e.g. sf_test_…a1B2; never the secret.' }),
    created_at: isoTime,
    revoked_at: isoTime.optional(),
  }),
);

const responses = {
  createApiKey: success(
    201,
    named(
      'ApiKeyCreated',
      z.strictObject({
        ...apiKeySchema.shape,
        key: z.string().meta({ description: 'The secret, shown once.' }),
        token: z.string().meta({ description: 'The same secret, where the Resend SDK reads it.' }),
      }),
    ),
    'The key, with its secret (shown once)',
  ),
  listApiKeys: success(
    200,
    named(
      'ApiKeyList',
      z.strictObject({
        object: z.literal('list'),
        has_more: z.literal(false).meta({ description: 'Every key is on the one page.' }),
        data: z.array(apiKeySchema),
      }),
    ),
    'Every key of the account',
  ),
  revokeApiKey: success(
    200,
    named(
      'ApiKeyRevoked',
      z.strictObject({
        ...apiKeySchema.shape,
        revoked: z.literal(true),
        deleted: z.literal(true).meta({ description: "The same as revoked, where Resend's SDK reads it." }),
      }),
    ),
    'The key, revoked',
  ),
} as const;

export function apiKeyView(key: ApiKey): Body<typeof apiKeySchema> {
  return {
    object: 'api_key',
    id: key.id,
    name: key.name,
    mode: key.mode,
    scopes: key.scopes,
    permission: permissionOf(key.scopes),
    domain_id: key.sendingDomain?.id ?? null,
    hint: key.hint,
    created_at: key.createdAt,
    ...(key.revokedAt ? { revoked_at: key.revokedAt } : {}),
  };
}

export function apiKeyHandlers(deps: CreateApiKeyDeps) {
  const create: RouteHandler = async ({ caller, body }) => {
    const input = validate(createBody, body ?? {}, 'body', { permission: 'invalid_access' });
    const { key, secret } = await createApiKey(deps, caller, {
      scopes: requestedScopes(input),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.domain_id !== undefined ? { domainId: input.domain_id } : {}),
    });
    return reply(responses.createApiKey, { ...apiKeyView(key), key: secret, token: secret });
  };
  const list: RouteHandler = async ({ caller }) =>
    reply(responses.listApiKeys, {
      object: 'list',
      has_more: false,
      data: (await listApiKeys(deps, caller)).map(apiKeyView),
    });
  const revoke: RouteHandler = async ({ caller, params }) => {
    const key = await revokeApiKey(deps, caller, params.id ?? '');
    return reply(responses.revokeApiKey, { ...apiKeyView(key), revoked: true, deleted: true });
  };
  return { createApiKey: create, listApiKeys: list, revokeApiKey: revoke };
}

export const requestSchemas: RequestSchemas = { createApiKey: { body: createBody } };
export const responseSchemas: ResponseSchemas = responses;
