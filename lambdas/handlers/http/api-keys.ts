// HTTP handlers for /v1/api-keys: parse → use case → response. The secret appears only in the 201.
import * as z from 'zod';
import { type ApiKeyDeps, createApiKey, listApiKeys, revokeApiKey } from '../../app/api-keys';
import type { ApiKey } from '../../app/ports';
import { MODES } from '../../domain/api-keys';
import { SCOPES } from '../../domain/scopes';
import type { RequestSchemas, ResponseSchemas, RouteHandler } from './context';
import { type Body, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const createBody = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  scopes: z.array(z.enum(SCOPES)).min(1, 'List at least one scope; keys created through the API name their scopes.'),
});

const apiKeySchema = named(
  'ApiKey',
  z.strictObject({
    object: z.literal('api_key'),
    id: z.string(),
    name: z.string(),
    mode: z.enum(MODES),
    scopes: z.array(z.enum(SCOPES)),
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
      }),
    ),
    'The key, with its secret (shown once)',
  ),
  listApiKeys: success(
    200,
    named('ApiKeyList', z.strictObject({ object: z.literal('list'), data: z.array(apiKeySchema) })),
    'Every key of the account',
  ),
  revokeApiKey: success(
    200,
    named('ApiKeyRevoked', z.strictObject({ ...apiKeySchema.shape, revoked: z.literal(true) })),
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
    hint: key.hint,
    created_at: key.createdAt,
    ...(key.revokedAt ? { revoked_at: key.revokedAt } : {}),
  };
}

export function apiKeyHandlers(deps: ApiKeyDeps) {
  const create: RouteHandler = async ({ caller, body }) => {
    const input = validate(createBody, body ?? {});
    const { key, secret } = await createApiKey(deps, caller, input);
    return reply(responses.createApiKey, { ...apiKeyView(key), key: secret });
  };
  const list: RouteHandler = async ({ caller }) =>
    reply(responses.listApiKeys, { object: 'list', data: (await listApiKeys(deps, caller)).map(apiKeyView) });
  const revoke: RouteHandler = async ({ caller, params }) => {
    const key = await revokeApiKey(deps, caller, params.id ?? '');
    return reply(responses.revokeApiKey, { ...apiKeyView(key), revoked: true });
  };
  return { createApiKey: create, listApiKeys: list, revokeApiKey: revoke };
}

export const requestSchemas: RequestSchemas = { createApiKey: { body: createBody } };
export const responseSchemas: ResponseSchemas = responses;
