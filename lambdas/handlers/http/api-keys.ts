// HTTP handlers for /v1/api-keys: parse → use case → response. The secret appears only in the 201.
import * as z from 'zod';
import { type ApiKeyDeps, createApiKey, listApiKeys, revokeApiKey } from '../../app/api-keys';
import type { ApiKey } from '../../app/ports';
import { SCOPES } from '../../domain/scopes';
import type { RequestSchemas, RouteHandler } from './context';
import { json } from './response';
import { validate } from './validate';

const createBody = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  scopes: z.array(z.enum(SCOPES)).min(1, 'List at least one scope; keys created through the API name their scopes.'),
});

export function apiKeyView(key: ApiKey) {
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
    return json(201, { ...apiKeyView(key), key: secret });
  };
  const list: RouteHandler = async ({ caller }) =>
    json(200, { object: 'list', data: (await listApiKeys(deps, caller)).map(apiKeyView) });
  const revoke: RouteHandler = async ({ caller, params }) => {
    const key = await revokeApiKey(deps, caller, params.id ?? '');
    return json(200, { ...apiKeyView(key), revoked: true });
  };
  return { createApiKey: create, listApiKeys: list, revokeApiKey: revoke };
}

export const requestSchemas: RequestSchemas = { createApiKey: { body: createBody } };
