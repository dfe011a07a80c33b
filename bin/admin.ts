// The platform team's admin CLI: accounts, plans and keys, dashboard links, data upgrades. Non-interactive, JSON on stdout,
// a clear message and exit 2 for bad arguments (and unknown commands), exit 1 when the operation fails;
// `help`, `--help`, `-h` (or `<command> --help`) print the usage on stdout and exit 0.

import type { EmailUpgrade } from '../lambdas/adapters/dynamodb/emails';
import type { DeadLetter } from '../lambdas/adapters/local/inbound-spool';
import {
  type AccountDeps,
  createAccount,
  createAccountKey,
  listAccountKeys,
  listAccounts,
  setPlan,
} from '../lambdas/app/accounts';
import { revokeKey } from '../lambdas/app/api-keys';
import { createSignInLink, type SignInDeps } from '../lambdas/app/dashboard/sign-in';
import { liftPause } from '../lambdas/app/reputation/lift-pause';
import { type MetricsDeps, readReputation, type SubjectReputation } from '../lambdas/app/reputation/metrics';
import type { ReputationStore, Standing } from '../lambdas/app/reputation/ports';
import { AppError, NotFoundError } from '../lambdas/domain/errors';
import { subjectView as apiSubjectView } from '../lambdas/handlers/http/email-metrics';
import { type AdminCommand, type AdminTarget, parseAdminArgs, USAGE, UsageError } from './admin-args';
import { localAdminDeps } from './admin-local';

export interface AdminSession {
  readonly deps: AccountDeps;
  /** Dashboard sign-in links: the session store, and the API's public base URL (stage included). */
  readonly dashboard: SignInDeps & { readonly baseUrl: string };
  /**
   * Upgrades emails stored by earlier versions (upgradeEmails): their `tenant` for byTenant, their body, links and
   * recipient states moved out of the email item, `expiresAt` on emails and history rows; and the status of each in the status index (backfillEmailStatuses).
   */
  upgradeEmails(): Promise<EmailUpgrade & { statuses: number }>;
  /** Moves suppressions stored by earlier versions to their shard, then marks the table (upgradeSuppressions). */
  upgradeSuppressions(): Promise<number>;
  /**
   * Sending reputation: the stage's store, and its policy (the running runtime's settings locally; with --aws the
   * operator's SF_REPUTATION_* variables, which should be the stage's, for what `reputation` judges).
   */
  readonly reputation: MetricsDeps & { readonly store: ReputationStore };
  /** Received messages that failed every try (the local runtime's dead letters), with where each message is. */
  inboundFailures(): Promise<readonly (DeadLetter & { readonly file: string })[]>;
  /** Puts a dead letter back in the spool; false when there is none with that id. */
  retryInboundFailure(id: string): Promise<boolean>;
  close(): Promise<void>;
}

async function openSession(target: AdminTarget): Promise<AdminSession> {
  if (target.kind === 'local') return localAdminDeps();
  const { awsAdminDeps } = await import('./admin-aws');
  return awsAdminDeps(target.stack);
}

export async function runCommand(
  session: AdminSession,
  command: Exclude<AdminCommand, { name: 'help' }>,
): Promise<unknown> {
  const { deps } = session;
  switch (command.name) {
    case 'dashboard-link': {
      const { dashboard } = session;
      const link = await createSignInLink(dashboard, {
        accountId: command.accountId,
        mode: command.mode,
        baseUrl: dashboard.baseUrl,
      });
      return { url: link.url, expires_at: link.expiresAt };
    }
    case 'dashboard-revoke':
      return {
        account_id: command.accountId,
        revoked: await session.dashboard.sessions.revokeAccount(command.accountId),
      };
    case 'upgrade-emails': {
      const upgraded = await session.upgradeEmails();
      return {
        emails_updated: upgraded.tenants + upgraded.emails,
        emails_given_tenant: upgraded.tenants,
        emails_split: upgraded.emails,
        events_dated: upgraded.events,
        statuses_noted: upgraded.statuses,
      };
    }
    case 'upgrade-suppressions':
      return { suppressions_moved: await session.upgradeSuppressions() };
    case 'reputation': {
      await requireAccount(deps, command.accountId);
      const tenant = { accountId: command.accountId, mode: command.mode };
      const judged = await readReputation(session.reputation, tenant);
      return {
        account_id: command.accountId,
        mode: command.mode,
        judged: judged.judged,
        status: judged.status,
        window_days: judged.policy.windowDays,
        minimum_sent: judged.policy.minimumSent,
        account: subjectView(judged.account),
        domains: judged.domains.map(subjectView),
      };
    }
    case 'reputation-lift': {
      await requireAccount(deps, command.accountId);
      const tenant = { accountId: command.accountId, mode: command.mode };
      const lifted = await liftPause(session.reputation, tenant, {
        ...(command.domain !== undefined ? { domain: command.domain } : {}),
        note: command.note,
      });
      return { account_id: command.accountId, mode: command.mode, lifted: lifted.map(liftedView) };
    }
    case 'list-inbound-failures':
      return {
        data: (await session.inboundFailures()).map((letter) => ({
          id: letter.id,
          received_at: letter.receivedAt,
          mail_from: letter.mailFrom,
          recipients: letter.recipients,
          bytes: letter.bytes,
          attempts: letter.attempts,
          reason: letter.reason,
          dead_at: letter.deadAt,
          file: letter.file,
        })),
      };
    case 'retry-inbound-failure': {
      if (!(await session.retryInboundFailure(command.id))) {
        throw new NotFoundError(`No inbound failure ${command.id} (list-inbound-failures lists them).`);
      }
      return { id: command.id, retried: true };
    }
    case 'create-account': {
      const account = await createAccount(deps, command.plan);
      return { account_id: account.id, plan: account.plan };
    }
    case 'set-plan': {
      const account = await setPlan(deps, command.accountId, command.plan);
      return { account_id: account.id, plan: account.plan };
    }
    case 'create-key': {
      const { key, secret } = await createAccountKey(deps, {
        accountId: command.accountId,
        mode: command.mode,
        ...(command.scopes ? { scopes: command.scopes } : {}),
        ...(command.keyName ? { name: command.keyName } : {}),
      });
      return { id: key.id, key: secret, account_id: key.accountId, mode: key.mode, scopes: key.scopes };
    }
    case 'revoke-key': {
      const key = await revokeKey(deps, { accountId: command.accountId, keyId: command.keyId });
      return { id: key.id, account_id: key.accountId, revoked: true, revoked_at: key.revokedAt };
    }
    case 'list-accounts': {
      const accounts = await listAccounts(deps);
      return {
        data: accounts.map((account) => ({
          id: account.id,
          plan: account.plan,
          created_at: account.createdAt,
          ...(account.isDefault ? { default: true } : {}),
        })),
      };
    }
    case 'list-keys': {
      const keys = await listAccountKeys(deps, command.accountId);
      // The hint (`sf_test_…a1B2`) tells keys apart; the secret itself is never stored, so never shown.
      return {
        data: keys.map((key) => ({
          id: key.id,
          name: key.name,
          mode: key.mode,
          scopes: key.scopes,
          hint: key.hint,
          created_at: key.createdAt,
          revoked: key.revokedAt !== undefined,
          ...(key.revokedAt ? { revoked_at: key.revokedAt } : {}),
        })),
      };
    }
  }
}

/** One subject of `reputation`: its figures over the window and its standing (the API's view, `domain` named so). */
function subjectView(s: SubjectReputation) {
  const { domain_name, ...rest } = apiSubjectView(s);
  return { ...(domain_name !== null ? { domain: domain_name } : {}), ...rest };
}

function liftedView(s: Standing) {
  return {
    subject: s.subject.kind === 'account' ? 'account' : `domain ${s.subject.domain}`,
    lifted_at: s.liftedAt,
    note: s.liftNote,
  };
}

async function requireAccount(deps: AccountDeps, accountId: string): Promise<void> {
  if (!(await deps.accounts.get(accountId))) throw new NotFoundError(`No account with id ${accountId}.`);
}

async function main(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parseAdminArgs>;
  try {
    parsed = parseAdminArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`admin: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.command.name === 'help') {
    console.log(USAGE);
    return 0;
  }
  const command = parsed.command;
  const session = await openSession(parsed.target);
  try {
    console.log(JSON.stringify(await runCommand(session, command)));
    return 0;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    console.error(`admin: ${error.message}`);
    return 1;
  } finally {
    await session.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`admin: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
