// Use cases for API keys (spec §2.4, §5; DESIGN §3): create (secret shown once), list, revoke.
import { generateApiKey, hashApiKey, keyHint, type Mode } from '../domain/api-keys';
import { InsufficientScopeError, NotFoundError } from '../domain/errors';
import { invalidRequest, problem } from '../domain/field-problems';
import { timeOrderedId } from '../domain/ids';
import { isSubset, normalizeScopes, type Scope } from '../domain/scopes';
import type { DomainRepository } from './domains/ports';
import type { ApiKey, ApiKeyRepository, AuthorizerCache, Clock, Principal, RandomBytes } from './ports';

export interface ApiKeyDeps {
  readonly apiKeys: ApiKeyRepository;
  readonly authorizerCache: AuthorizerCache;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

/** Creating a key restricted to a domain looks the domain up in the caller's account and mode. */
export interface CreateApiKeyDeps extends ApiKeyDeps {
  readonly domains: Pick<DomainRepository, 'get'>;
}

export interface IssuedKey {
  readonly key: ApiKey;
  /** The secret: returned once, never stored. */
  readonly secret: string;
}

/** Issues a key for an account; the secret is returned once and only its hash is stored. */
export async function issueApiKey(
  deps: ApiKeyDeps,
  input: {
    accountId: string;
    mode: Mode;
    scopes: readonly Scope[];
    name?: string;
    sendingDomain?: { id: string; name: string };
  },
): Promise<IssuedKey> {
  const secret = generateApiKey(input.mode, deps.random);
  const now = deps.clock.now();
  const key: ApiKey = {
    id: timeOrderedId('key', now, deps.random),
    hash: hashApiKey(secret),
    accountId: input.accountId,
    mode: input.mode,
    scopes: normalizeScopes(input.scopes),
    name: input.name ?? 'API key',
    hint: keyHint(secret),
    createdAt: new Date(now).toISOString(),
    ...(input.sendingDomain ? { sendingDomain: input.sendingDomain } : {}),
  };
  await deps.apiKeys.create(key);
  return { key, secret };
}

/**
 * POST /v1/api-keys: scopes must be a subset of the caller's; the new key takes the caller's mode. `domainId`
 * restricts a sending key (scope email:send alone) to one domain of the caller's account and mode.
 */
export async function createApiKey(
  deps: CreateApiKeyDeps,
  caller: Principal,
  input: { scopes: readonly Scope[]; name?: string; domainId?: string },
): Promise<IssuedKey> {
  if (!isSubset(input.scopes, caller.scopes)) {
    const missing = input.scopes.filter((scope) => !caller.scopes.includes(scope));
    throw new InsufficientScopeError(`A key cannot grant scopes its creator lacks: ${missing.join(', ')}.`);
  }
  const { domainId, ...rest } = input;
  let sendingDomain: { id: string; name: string } | undefined;
  if (domainId !== undefined) {
    if (input.scopes.length !== 1 || input.scopes[0] !== 'email:send') {
      throw invalidRequest([problem(['domain_id'], 'is only for a sending key (`permission: "sending_access"`).')]);
    }
    const domain = await deps.domains.get({ accountId: caller.accountId, mode: caller.mode }, domainId);
    if (!domain) {
      throw invalidRequest([
        problem(['domain_id'], `names no domain of this account (in ${caller.mode} mode): ${domainId}.`),
      ]);
    }
    sendingDomain = { id: domain.id, name: domain.name };
  }
  return issueApiKey(deps, {
    ...rest,
    accountId: caller.accountId,
    mode: caller.mode,
    ...(sendingDomain ? { sendingDomain } : {}),
  });
}

/** Active keys of the caller's account and mode, oldest first. */
export async function listApiKeys(deps: Pick<ApiKeyDeps, 'apiKeys'>, caller: Principal): Promise<ApiKey[]> {
  const keys = await deps.apiKeys.listByAccount(caller.accountId);
  return keys.filter((key) => key.mode === caller.mode && !key.revokedAt);
}

/** DELETE /v1/api-keys/:id: a key of the caller's account and mode; anything else is 404. */
export function revokeApiKey(deps: ApiKeyDeps, caller: Principal, keyId: string): Promise<ApiKey> {
  return revokeKey(deps, { accountId: caller.accountId, keyId, mode: caller.mode });
}

/** Revokes an active key of an account (of one mode when given), in the table and in the authorizer's cache. */
export async function revokeKey(
  deps: ApiKeyDeps,
  target: { accountId: string; keyId: string; mode?: Mode },
): Promise<ApiKey> {
  const keys = await deps.apiKeys.listByAccount(target.accountId);
  const key = keys.find((k) => k.id === target.keyId && !k.revokedAt && (!target.mode || k.mode === target.mode));
  const revoked = key && (await deps.apiKeys.revoke(key, new Date(deps.clock.now()).toISOString()));
  if (!revoked) throw new NotFoundError(`No active API key with id ${target.keyId}.`);
  await deps.authorizerCache.flush();
  return revoked;
}
