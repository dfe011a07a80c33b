// Use cases for accounts and plans, driven by the platform team's admin CLI (DESIGN §3).
import type { Mode } from '../domain/api-keys';
import { NotFoundError } from '../domain/errors';
import { timeOrderedId } from '../domain/ids';
import type { PlanName } from '../domain/plans';
import { SCOPES, type Scope } from '../domain/scopes';
import { type IssuedKey, issueApiKey } from './api-keys';
import type {
  Account,
  AccountRepository,
  ApiKeyRepository,
  AuthorizerCache,
  Clock,
  RandomBytes,
  UsagePlans,
} from './ports';

export interface AccountDeps {
  readonly accounts: AccountRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly usagePlans: UsagePlans;
  readonly authorizerCache: AuthorizerCache;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

/** The name of the test key the local runtime prints on its first start. */
export const DEFAULT_KEY_NAME = 'Default test key';

export async function createAccount(
  deps: AccountDeps,
  plan: PlanName,
  options: { isDefault?: boolean } = {},
): Promise<Account> {
  const now = deps.clock.now();
  const id = timeOrderedId('acct', now, deps.random);
  const usage = await deps.usagePlans.enroll(id, plan);
  const account: Account = {
    id,
    plan,
    createdAt: new Date(now).toISOString(),
    ...usage,
    ...(options.isDefault ? { isDefault: true } : {}),
  };
  await deps.accounts.create(account);
  return account;
}

export async function setPlan(deps: AccountDeps, accountId: string, plan: PlanName): Promise<Account> {
  const account = await requireAccount(deps, accountId);
  if (account.plan === plan) return account;
  await deps.usagePlans.move(account, plan);
  const updated = (await deps.accounts.update(accountId, { plan })) ?? account;
  // The plan travels in the authorizer's cached context: flush it so the new limit applies now.
  await deps.authorizerCache.flush();
  return updated;
}

/** The dashboard path of spec §5.5: all scopes unless a subset is named. */
export async function createAccountKey(
  deps: AccountDeps,
  input: { accountId: string; mode: Mode; scopes?: readonly Scope[]; name?: string },
): Promise<IssuedKey> {
  await requireAccount(deps, input.accountId);
  return issueApiKey(deps, { ...input, scopes: input.scopes ?? SCOPES });
}

/** Every account, oldest first (the admin CLI's list-accounts). */
export async function listAccounts(deps: Pick<AccountDeps, 'accounts'>): Promise<Account[]> {
  return deps.accounts.list();
}

/** The keys of one account, oldest first, revoked ones included (the admin CLI's list-keys). */
export async function listAccountKeys(deps: Pick<AccountDeps, 'accounts' | 'apiKeys'>, accountId: string) {
  await requireAccount(deps, accountId);
  return deps.apiKeys.listByAccount(accountId);
}

/**
 * The default account of a local store: the one marked so, or (a store seeded before accounts were marked)
 * one that owns a key named DEFAULT_KEY_NAME. Accounts made with the admin CLI are neither, so creating one
 * before the first `npm start` no longer keeps the runtime from creating and printing the default.
 */
export async function findDefaultAccount(deps: Pick<AccountDeps, 'accounts' | 'apiKeys'>): Promise<Account | null> {
  const accounts = await deps.accounts.list();
  const marked = accounts.find((account) => account.isDefault);
  if (marked) return marked;
  for (const account of accounts) {
    const keys = await deps.apiKeys.listByAccount(account.id);
    if (keys.some((key) => key.name === DEFAULT_KEY_NAME)) return account;
  }
  return null;
}

async function requireAccount(deps: Pick<AccountDeps, 'accounts'>, accountId: string): Promise<Account> {
  const account = await deps.accounts.get(accountId);
  if (!account) throw new NotFoundError(`No account with id ${accountId}.`);
  return account;
}
