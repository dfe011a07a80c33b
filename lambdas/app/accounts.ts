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

export async function createAccount(deps: AccountDeps, plan: PlanName): Promise<Account> {
  const now = deps.clock.now();
  const id = timeOrderedId('acct', now, deps.random);
  const usage = await deps.usagePlans.enroll(id, plan);
  const account: Account = { id, plan, createdAt: new Date(now).toISOString(), ...usage };
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

async function requireAccount(deps: Pick<AccountDeps, 'accounts'>, accountId: string): Promise<Account> {
  const account = await deps.accounts.get(accountId);
  if (!account) throw new NotFoundError(`No account with id ${accountId}.`);
  return account;
}
