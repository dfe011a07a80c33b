// Unit tests for the account use cases (lambdas/app/accounts.ts) with in-memory repositories and usage plans.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type AccountDeps,
  createAccount,
  createAccountKey,
  DEFAULT_KEY_NAME,
  findDefaultAccount,
  listAccountKeys,
  setPlan,
} from '../../lambdas/app/accounts';
import { hashApiKey, parseApiKey } from '../../lambdas/domain/api-keys';
import { NotFoundError } from '../../lambdas/domain/errors';
import { SCOPES } from '../../lambdas/domain/scopes';
import {
  FakeClock,
  InMemoryAccountRepository,
  InMemoryApiKeyRepository,
  RecordingAuthorizerCache,
  RecordingUsagePlans,
  seededRandom,
} from '../support/fakes';

describe('account use cases', () => {
  let accounts: InMemoryAccountRepository;
  let apiKeys: InMemoryApiKeyRepository;
  let usagePlans: RecordingUsagePlans;
  let clock: FakeClock;
  let deps: AccountDeps;
  let authorizerCache: RecordingAuthorizerCache;

  beforeEach(() => {
    accounts = new InMemoryAccountRepository();
    apiKeys = new InMemoryApiKeyRepository();
    usagePlans = new RecordingUsagePlans({ usageKey: 'usage-key-value', usageKeyId: 'usage-key-id' });
    clock = new FakeClock(Date.UTC(2025, 6, 1, 0, 0, 0, 0));
    authorizerCache = new RecordingAuthorizerCache();
    deps = { accounts, apiKeys, usagePlans, authorizerCache, clock, random: seededRandom() };
  });

  describe('findDefaultAccount', () => {
    it('finds the account marked default, not one an admin made before it', async () => {
      // Arrange
      await createAccount(deps, 'starter');
      expect(await findDefaultAccount(deps)).toBeNull();
      const marked = await createAccount(deps, 'free', { isDefault: true });

      // Act / Assert
      expect(marked.isDefault).toBe(true);
      expect(await findDefaultAccount(deps)).toEqual(marked);
    });

    it('recognises the default account of a store seeded before the mark by its default key', async () => {
      // Arrange
      await createAccount(deps, 'growth');
      const legacy = await createAccount(deps, 'free');
      await createAccountKey(deps, { accountId: legacy.id, mode: 'test', name: DEFAULT_KEY_NAME });

      // Act / Assert
      expect(await findDefaultAccount(deps)).toEqual(legacy);
    });
  });

  describe('listAccountKeys', () => {
    it("lists an account's keys, revoked ones included, and refuses an unknown account", async () => {
      const account = await createAccount(deps, 'free');
      const { key } = await createAccountKey(deps, { accountId: account.id, mode: 'test' });
      expect(await listAccountKeys(deps, account.id)).toEqual([key]);
      await expect(listAccountKeys(deps, 'acct_missing')).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('createAccount', () => {
    it('enrols the account in its plan and stores the usage identity it got back', async () => {
      // Act
      const account = await createAccount(deps, 'growth');

      // Assert
      expect(account).toEqual({
        id: expect.stringMatching(/^acct_[0-9a-z]{26}$/),
        plan: 'growth',
        createdAt: '2025-07-01T00:00:00.000Z',
        usageKey: 'usage-key-value',
        usageKeyId: 'usage-key-id',
      });
      expect(usagePlans.enrolled).toEqual([{ accountId: account.id, plan: 'growth' }]);
      expect(await accounts.get(account.id)).toEqual(account);
    });

    it('stores no usage identity where there are no usage plans', async () => {
      // Arrange
      deps = { ...deps, usagePlans: new RecordingUsagePlans() };

      // Act
      const account = await createAccount(deps, 'free');

      // Assert
      expect(await accounts.get(account.id)).toEqual({ id: account.id, plan: 'free', createdAt: account.createdAt });
    });
  });

  describe('setPlan', () => {
    it('moves the usage identity and stores the new plan when the plan changes', async () => {
      // Arrange
      const account = await createAccount(deps, 'free');

      // Act
      const updated = await setPlan(deps, account.id, 'scale');

      // Assert
      expect(updated).toEqual({ ...account, plan: 'scale' });
      expect(usagePlans.moves).toEqual([{ accountId: account.id, from: 'free', to: 'scale' }]);
      expect((await accounts.get(account.id))?.plan).toBe('scale');
    });

    it('does not call usagePlans.move when the plan is unchanged', async () => {
      // Arrange
      const account = await createAccount(deps, 'starter');

      // Act
      const same = await setPlan(deps, account.id, 'starter');

      // Assert
      expect(same).toEqual(account);
      expect(usagePlans.moves).toEqual([]);
    });

    it('404s for an unknown account without touching usage plans', async () => {
      // Act
      const act = setPlan(deps, 'acct_missing', 'growth');

      // Assert
      await expect(act).rejects.toBeInstanceOf(NotFoundError);
      expect(usagePlans.moves).toEqual([]);
    });

    it('does not store the new plan when moving the usage identity fails', async () => {
      // Arrange
      const account = await createAccount(deps, 'free');
      usagePlans.move = async () => {
        throw new Error('API Gateway throttled');
      };

      // Act
      const act = setPlan(deps, account.id, 'growth');

      // Assert
      await expect(act).rejects.toThrow('API Gateway throttled');
      expect((await accounts.get(account.id))?.plan).toBe('free');
    });
  });

  describe('createAccountKey', () => {
    it('gives a dashboard key all scopes by default (spec §5.5)', async () => {
      // Arrange
      const account = await createAccount(deps, 'free');

      // Act
      const { key, secret } = await createAccountKey(deps, { accountId: account.id, mode: 'live' });

      // Assert
      expect(parseApiKey(secret)).toEqual({ mode: 'live' });
      expect(key.scopes).toEqual([...SCOPES]);
      expect(key.accountId).toBe(account.id);
      expect(await apiKeys.findByHash(hashApiKey(secret))).toEqual(key);
    });

    it('uses the scopes and name it is given', async () => {
      // Arrange
      const account = await createAccount(deps, 'free');

      // Act
      const { key } = await createAccountKey(deps, {
        accountId: account.id,
        mode: 'test',
        scopes: ['webhook:read'],
        name: 'Read-only',
      });

      // Assert
      expect(key).toMatchObject({ mode: 'test', scopes: ['webhook:read'], name: 'Read-only' });
    });

    it('404s for an unknown account and stores no key', async () => {
      // Act
      const act = createAccountKey(deps, { accountId: 'acct_missing', mode: 'test' });

      // Assert
      await expect(act).rejects.toBeInstanceOf(NotFoundError);
      expect(apiKeys.items.size).toBe(0);
    });
  });
});
