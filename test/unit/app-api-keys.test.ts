// Unit tests for the API key use cases (lambdas/app/api-keys.ts) with in-memory repositories.
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreateApiKeyDeps } from '../../lambdas/app/api-keys';
import { createApiKey, issueApiKey, listApiKeys, revokeApiKey, revokeKey } from '../../lambdas/app/api-keys';
import { authenticate } from '../../lambdas/app/authenticate';
import type { Principal } from '../../lambdas/app/ports';
import { hashApiKey, parseApiKey } from '../../lambdas/domain/api-keys';
import { InsufficientScopeError, NotFoundError, UnauthorizedError, ValidationError } from '../../lambdas/domain/errors';
import { SCOPES } from '../../lambdas/domain/scopes';
import {
  FakeClock,
  InMemoryAccountRepository,
  InMemoryApiKeyRepository,
  InMemoryDomainRepository,
  RecordingAuthorizerCache,
  seededRandom,
} from '../support/fakes';

const caller: Principal = {
  accountId: 'acct_01',
  keyId: 'key_caller',
  mode: 'test',
  scopes: [...SCOPES],
  plan: 'starter',
};

describe('API key use cases', () => {
  let apiKeys: InMemoryApiKeyRepository;
  let clock: FakeClock;
  let deps: CreateApiKeyDeps;
  let authorizerCache: RecordingAuthorizerCache;
  let domains: InMemoryDomainRepository;

  beforeEach(async () => {
    apiKeys = new InMemoryApiKeyRepository();
    clock = new FakeClock(Date.UTC(2025, 2, 14, 9, 26, 53, 589));
    authorizerCache = new RecordingAuthorizerCache();
    domains = new InMemoryDomainRepository();
    await domains.create(
      {
        accountId: 'acct_01',
        mode: 'test',
        id: 'dom_mail',
        name: 'mail.example.com',
        status: 'verified',
        records: [],
        createdAt: '2025-03-01T00:00:00.000Z',
        updatedAt: '2025-03-01T00:00:00.000Z',
      },
      [],
    );
    deps = { apiKeys, authorizerCache, clock, random: seededRandom(), domains };
  });

  describe('createApiKey restricted to a domain', () => {
    it('stores the domain with a sending key, and authenticating it names the domain', async () => {
      const { key, secret } = await createApiKey(deps, caller, { scopes: ['email:send'], domainId: 'dom_mail' });
      expect(key.sendingDomain).toEqual({ id: 'dom_mail', name: 'mail.example.com' });
      const accounts = new InMemoryAccountRepository();
      await accounts.create({ id: 'acct_01', plan: 'starter', createdAt: '2025-03-01T00:00:00.000Z' });
      const principal = await authenticate({ apiKeys, accounts }, `Bearer ${secret}`);
      expect(principal.sendingDomain).toBe('mail.example.com');
    });

    it('refuses a domain of another mode or account, and a key that is not a sending key, with a 422', async () => {
      await expect(
        createApiKey(deps, { ...caller, mode: 'live' }, { scopes: ['email:send'], domainId: 'dom_mail' }),
      ).rejects.toThrow(ValidationError);
      await expect(
        createApiKey(deps, caller, { scopes: ['email:send', 'email:read'], domainId: 'dom_mail' }),
      ).rejects.toThrow(ValidationError);
      expect(apiKeys.items.size).toBe(0);
    });
  });

  describe('createApiKey', () => {
    it('issues a key of the caller’s account and mode with the requested scopes, normalized', async () => {
      // Act
      const { key, secret } = await createApiKey(deps, caller, {
        scopes: ['webhook:read', 'email:send', 'webhook:read'],
        name: 'CI',
      });

      // Assert
      expect(parseApiKey(secret)).toEqual({ mode: 'test' });
      expect(key).toMatchObject({
        accountId: 'acct_01',
        mode: 'test',
        scopes: ['email:send', 'webhook:read'],
        name: 'CI',
        createdAt: '2025-03-14T09:26:53.589Z',
      });
      expect(key.id).toMatch(/^key_[0-9a-z]{26}$/);
      expect(key.revokedAt).toBeUndefined();
    });

    it('gives the new key the caller’s mode: a live caller gets a live key', async () => {
      // Act
      const { key, secret } = await createApiKey(deps, { ...caller, mode: 'live' }, { scopes: ['email:send'] });

      // Assert
      expect(secret.startsWith('sf_live_')).toBe(true);
      expect(key.mode).toBe('live');
      expect((await apiKeys.findByHash(key.hash))?.mode).toBe('live');
    });

    it('stores only the hash: the secret appears nowhere in the stored record', async () => {
      // Act
      const { secret } = await createApiKey(deps, caller, { scopes: ['email:send'] });

      // Assert
      expect(apiKeys.items.size).toBe(1);
      const [stored] = [...apiKeys.items.values()];
      const serialized = JSON.stringify(stored);
      const body = secret.slice('sf_test_'.length);
      expect(stored?.hash).toBe(hashApiKey(secret));
      expect(serialized).not.toContain(secret);
      expect(serialized).not.toContain(body.slice(0, 8));
      expect(serialized).not.toContain(body.slice(-12, -4));
      expect(stored?.hint).toBe(`sf_test_…${secret.slice(-4)}`);
    });

    it('stores a key that authenticates as the new key, with its scopes', async () => {
      // Arrange
      const accounts = new InMemoryAccountRepository();
      await accounts.create({ id: 'acct_01', plan: 'starter', createdAt: '2025-01-01T00:00:00.000Z' });

      // Act
      const { key, secret } = await createApiKey(deps, caller, { scopes: ['domain:read'] });
      const principal = await authenticate({ accounts, apiKeys }, `Bearer ${secret}`);

      // Assert
      expect(principal).toEqual({
        accountId: 'acct_01',
        keyId: key.id,
        mode: 'test',
        scopes: ['domain:read'],
        plan: 'starter',
      });
    });

    it('names the key "API key" when no name is given', async () => {
      const { key } = await createApiKey(deps, caller, { scopes: ['email:send'] });
      expect(key.name).toBe('API key');
    });

    it('refuses scopes beyond the caller’s with InsufficientScopeError naming them, and stores nothing', async () => {
      // Arrange
      const limited: Principal = { ...caller, scopes: ['email:send', 'webhook:read'] };

      // Act
      const act = createApiKey(deps, limited, { scopes: ['email:send', 'webhook:write', 'domain:read'] });

      // Assert
      await expect(act).rejects.toBeInstanceOf(InsufficientScopeError);
      await expect(act).rejects.toThrow(/webhook:write, domain:read/);
      expect(apiKeys.items.size).toBe(0);
    });

    it('allows exactly the caller’s own scopes', async () => {
      // Arrange
      const limited: Principal = { ...caller, scopes: ['webhook:read', 'webhook:write'] };

      // Act
      const { key } = await createApiKey(deps, limited, { scopes: ['webhook:write', 'webhook:read'] });

      // Assert
      expect(key.scopes).toEqual(['webhook:read', 'webhook:write']);
    });

    it('gives every key a different secret and hash', async () => {
      // Act
      const issued = await Promise.all(
        Array.from({ length: 10 }, () => createApiKey(deps, caller, { scopes: ['email:send'] })),
      );

      // Assert
      expect(new Set(issued.map((i) => i.secret)).size).toBe(10);
      expect(apiKeys.items.size).toBe(10);
    });
  });

  describe('listApiKeys', () => {
    it('lists the active keys of the caller’s account and mode only, oldest first', async () => {
      // Arrange
      const first = await issueApiKey(deps, { accountId: 'acct_01', mode: 'test', scopes: ['email:send'] });
      clock.advance(1000);
      const live = await issueApiKey(deps, { accountId: 'acct_01', mode: 'live', scopes: ['email:send'] });
      clock.advance(1000);
      const second = await issueApiKey(deps, { accountId: 'acct_01', mode: 'test', scopes: ['email:read'] });
      clock.advance(1000);
      const revoked = await issueApiKey(deps, { accountId: 'acct_01', mode: 'test', scopes: ['email:read'] });
      await apiKeys.revoke(revoked.key, new Date(clock.now()).toISOString());
      await issueApiKey(deps, { accountId: 'acct_02', mode: 'test', scopes: ['email:send'] });

      // Act
      const listed = await listApiKeys(deps, caller);

      // Assert
      expect(listed.map((k) => k.id)).toEqual([first.key.id, second.key.id]);
      expect(listed.map((k) => k.id)).not.toContain(live.key.id);
    });
  });

  describe('revokeApiKey', () => {
    it('revokes a key of the caller’s account and mode, stamping revokedAt from the clock', async () => {
      // Arrange
      const { key, secret } = await issueApiKey(deps, { accountId: 'acct_01', mode: 'test', scopes: ['email:send'] });
      clock.advance(60_000);

      // Act
      const revoked = await revokeApiKey(deps, caller, key.id);

      // Assert
      expect(revoked).toMatchObject({ id: key.id, revokedAt: new Date(clock.now()).toISOString() });
      expect((await apiKeys.findByHash(hashApiKey(secret)))?.revokedAt).toBe(revoked.revokedAt);
      const accounts = new InMemoryAccountRepository();
      await accounts.create({ id: 'acct_01', plan: 'starter', createdAt: '2025-01-01T00:00:00.000Z' });
      await expect(authenticate({ accounts, apiKeys }, `Bearer ${secret}`)).rejects.toBeInstanceOf(UnauthorizedError);
    });

    it('404s for a key of the same account in the other mode, and leaves it active', async () => {
      // Arrange
      const { key } = await issueApiKey(deps, { accountId: 'acct_01', mode: 'live', scopes: ['email:send'] });

      // Act
      const act = revokeApiKey(deps, caller, key.id);

      // Assert
      await expect(act).rejects.toBeInstanceOf(NotFoundError);
      expect((await apiKeys.findByHash(key.hash))?.revokedAt).toBeUndefined();
    });

    it('404s for a key of another account, and leaves it active', async () => {
      // Arrange
      const { key } = await issueApiKey(deps, { accountId: 'acct_02', mode: 'test', scopes: ['email:send'] });

      // Act
      const act = revokeApiKey(deps, caller, key.id);

      // Assert
      await expect(act).rejects.toBeInstanceOf(NotFoundError);
      expect((await apiKeys.findByHash(key.hash))?.revokedAt).toBeUndefined();
    });

    it('404s for an unknown id and for a key already revoked', async () => {
      // Arrange
      const { key } = await issueApiKey(deps, { accountId: 'acct_01', mode: 'test', scopes: ['email:send'] });
      const first = await revokeApiKey(deps, caller, key.id);
      clock.advance(5000);

      // Act
      const again = revokeApiKey(deps, caller, key.id);
      const unknown = revokeApiKey(deps, caller, 'key_doesnotexist');

      // Assert
      await expect(again).rejects.toBeInstanceOf(NotFoundError);
      await expect(unknown).rejects.toBeInstanceOf(NotFoundError);
      expect((await apiKeys.findByHash(key.hash))?.revokedAt).toBe(first.revokedAt);
    });
  });

  describe('revokeKey (admin)', () => {
    it('revokes a key of any mode when no mode is given', async () => {
      // Arrange
      const { key } = await issueApiKey(deps, { accountId: 'acct_01', mode: 'live', scopes: ['email:send'] });

      // Act
      const revoked = await revokeKey(deps, { accountId: 'acct_01', keyId: key.id });

      // Assert
      expect(revoked.revokedAt).toBe(new Date(clock.now()).toISOString());
      expect((await apiKeys.findByHash(key.hash))?.revokedAt).toBe(revoked.revokedAt);
    });

    it('404s when the mode is given and differs, or the account differs', async () => {
      // Arrange
      const { key } = await issueApiKey(deps, { accountId: 'acct_01', mode: 'live', scopes: ['email:send'] });

      // Act
      const wrongMode = revokeKey(deps, { accountId: 'acct_01', keyId: key.id, mode: 'test' });
      const wrongAccount = revokeKey(deps, { accountId: 'acct_02', keyId: key.id });

      // Assert
      await expect(wrongMode).rejects.toBeInstanceOf(NotFoundError);
      await expect(wrongAccount).rejects.toBeInstanceOf(NotFoundError);
      expect((await apiKeys.findByHash(key.hash))?.revokedAt).toBeUndefined();
    });

    it('404s when the repository reports the key was revoked concurrently', async () => {
      // Arrange: listed as active, but the conditional revoke loses the race.
      const { key } = await issueApiKey(deps, { accountId: 'acct_01', mode: 'test', scopes: ['email:send'] });
      apiKeys.revoke = async () => null;

      // Act
      const act = revokeKey(deps, { accountId: 'acct_01', keyId: key.id });

      // Assert
      await expect(act).rejects.toBeInstanceOf(NotFoundError);
    });
  });
});
