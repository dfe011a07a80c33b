// Use case: turn an Authorization header into a Principal, or refuse with 401 (spec §5.6).
import { bearerToken, hashApiKey, hashesEqual, parseApiKey } from '../domain/api-keys';
import { UnauthorizedError } from '../domain/errors';
import type { AccountRepository, ApiKeyRepository, Principal } from './ports';

export interface AuthenticateDeps {
  readonly apiKeys: ApiKeyRepository;
  readonly accounts: AccountRepository;
}

/** Resolves the caller of a request. Throws UnauthorizedError for a missing, malformed, unknown or revoked key. */
export async function authenticate(deps: AuthenticateDeps, authorization: string | undefined): Promise<Principal> {
  const token = bearerToken(authorization);
  if (!token) throw new UnauthorizedError(missingBearer(authorization), { errorName: 'missing_api_key' });
  if (!parseApiKey(token)) throw new UnauthorizedError('Malformed API key: keys start with sf_live_ or sf_test_.');

  const hash = hashApiKey(token);
  const key = await deps.apiKeys.findByHash(hash);
  if (!key || !hashesEqual(key.hash, hash)) throw new UnauthorizedError('Invalid API key.');
  if (key.revokedAt) throw new UnauthorizedError('This API key has been revoked.');

  const account = await deps.accounts.get(key.accountId);
  if (!account) throw new UnauthorizedError('Invalid API key.');

  return {
    accountId: account.id,
    keyId: key.id,
    mode: key.mode,
    scopes: key.scopes,
    plan: account.plan,
    ...(account.usageKey ? { usageKey: account.usageKey } : {}),
    ...(key.sendingDomain ? { sendingDomain: key.sendingDomain.name } : {}),
  };
}

/** Why a header gave no bearer token: absent, a bare key (the commonest slip), or another scheme. */
function missingBearer(authorization: string | undefined): string {
  if (!authorization?.trim()) return 'Missing API key: send the header Authorization: Bearer <API_KEY>.';
  if (parseApiKey(authorization.trim())) {
    return 'The Authorization header holds a key without its scheme: add "Bearer " before the key (Authorization: Bearer <API_KEY>).';
  }
  return 'The Authorization header must use the Bearer scheme: send the header Authorization: Bearer <API_KEY>.';
}
