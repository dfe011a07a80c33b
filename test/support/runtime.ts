// Integration harness: a local runtime on port 0 with an in-memory store, plus admin use cases wired to
// the same DynamoDB endpoint (exactly what the admin CLI does) to make accounts and keys.
import { randomBytes } from 'node:crypto';
import { noUsagePlans } from '../../lambdas/adapters/local/usage-plans';
import { type AccountDeps, createAccount, createAccountKey } from '../../lambdas/app/accounts';
import type { Mode } from '../../lambdas/domain/api-keys';
import type { PlanName } from '../../lambdas/domain/plans';
import type { Scope } from '../../lambdas/domain/scopes';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { type LocalRuntime, type LocalRuntimeOptions, startLocalRuntime } from '../../lambdas/runtime/local/runtime';
import { createRepositories } from '../../lambdas/runtime/repositories';

export interface TestRuntime extends LocalRuntime {
  readonly admin: AccountDeps;
  readonly repos: ReturnType<typeof createRepositories>;
  /** A new account with one key; returns the key's secret. */
  newKey(options?: {
    plan?: PlanName;
    mode?: Mode;
    scopes?: Scope[];
  }): Promise<{ accountId: string; key: string; keyId: string }>;
  /** Waits for sends due now, then the events they publish, then deliveries (with their retries). */
  settle(): Promise<void>;
  /** fetch against the runtime: `path` is below /v1. */
  call(path: string, init?: RequestInit & { key?: string }): Promise<Response>;
}

/** Fast defaults for tests: simulated events without spacing, short retries, quiet logs. */
export const TEST_ENV = {
  PORT: '0',
  SF_SMTP_PORT: '0',
  SF_DATA_DIR: ':memory:',
  SF_SEED: 'false',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  SF_SIMULATOR_STEP_SECONDS: '0',
  SF_RETRY_DELAYS: '0.2,0.2,0.2,0.2',
  SF_IP_RATE_LIMIT: '1000',
  SF_DOMAIN_VERIFY_SECONDS: '0',
};

export async function startTestRuntime(
  env: Record<string, string> = {},
  options: LocalRuntimeOptions = {},
): Promise<TestRuntime> {
  const config = loadConfig({ ...TEST_ENV, ...env }, localTableDefaults());
  const runtime = await startLocalRuntime(config, options);
  const client = localDynamoClient(runtime.dynamoEndpoint);
  // The runtime's own body store (its data directory, or its memory): bodies are not in DynamoDB locally.
  const repos = createRepositories(client, config.tables, { emailBodies: runtime.services.emails.bodies });
  const admin: AccountDeps = {
    ...repos,
    usagePlans: noUsagePlans,
    authorizerCache: runtime.services.authorizerCache,
    clock: { now: () => Date.now() },
    random: randomBytes,
  };
  return {
    ...runtime,
    admin,
    repos,
    async newKey(options = {}) {
      const account = await createAccount(admin, options.plan ?? 'scale');
      const { key, secret } = await createAccountKey(admin, {
        accountId: account.id,
        mode: options.mode ?? 'test',
        ...(options.scopes ? { scopes: options.scopes } : {}),
      });
      return { accountId: account.id, key: secret, keyId: key.id };
    },
    async settle() {
      // Sends due now (not ones scheduled for later), then every event and delivery, retries included.
      await runtime.queues.sends.settled();
      await runtime.queues.events.idle();
      await runtime.queues.deliveries.idle();
      await runtime.queues.slowDeliveries.idle();
      // And the delivery figures the worker holds for up to 5 s (app/webhooks/figure-tally), written now.
      await runtime.services.figureTally.flush();
    },
    call(path, init = {}) {
      const { key, headers, ...rest } = init;
      return fetch(`${runtime.url}${path}`, {
        ...rest,
        headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(headers as Record<string, string>) },
      });
    },
    async stop() {
      client.destroy();
      await runtime.stop();
    },
  };
}

/** Waits until the current one-second window has at least `needMs` left (rate-limit tests). */
export async function atWindowStart(needMs = 700): Promise<void> {
  const intoWindow = Date.now() % 1000;
  if (1000 - intoWindow < needMs) await new Promise((r) => setTimeout(r, 1000 - intoWindow + 5));
}
