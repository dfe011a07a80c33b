// The admin CLI's local target: the DynamoDB endpoint of the local runtime running from this checkout
// (announced in its state file), or, when none runs, the data directory opened directly. Revocations and
// plan changes flush the running runtime's authorizer cache through its loopback admin endpoint.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { backfillEmailStatuses } from '../lambdas/adapters/dynamodb/email-history';
import { upgradeEmails } from '../lambdas/adapters/dynamodb/emails';
import { upgradeSuppressions } from '../lambdas/adapters/dynamodb/suppressions';
import { localEmailBodies } from '../lambdas/adapters/local/file-email-bodies';
import { inboundDeadDir, readDeadLetters, redriveDeadLetter } from '../lambdas/adapters/local/inbound-spool';
import { runtimeAuthorizerCache } from '../lambdas/adapters/local/runtime-authorizer-cache';
import { noUsagePlans, outOfProcessAuthorizerCache } from '../lambdas/adapters/local/usage-plans';
import { loadConfig, localTableDefaults } from '../lambdas/runtime/config';
import { documentClient } from '../lambdas/runtime/document-client';
import { type LocalDynamo, startDynalite } from '../lambdas/runtime/local/dynalite';
import { createTables, embeddedDynamoClient, localDynamoClient } from '../lambdas/runtime/local/dynamo';
import { makeDataDirPrivate } from '../lambdas/runtime/local/private-files';
import { createRepositories } from '../lambdas/runtime/repositories';
import type { AdminSession } from './admin';
import { runningLocalRuntime } from './local-state';

export async function localAdminDeps(): Promise<AdminSession> {
  const config = loadConfig(process.env, localTableDefaults());
  const running = runningLocalRuntime();
  const endpoint = process.env.SF_DYNAMODB_ENDPOINT ?? running?.dynamoEndpoint;
  // The cache to flush is the running runtime's, when the CLI works on that runtime's store.
  const cache =
    running && endpoint === running.dynamoEndpoint
      ? runtimeAuthorizerCache(new URL(running.url).origin, running.adminToken)
      : outOfProcessAuthorizerCache;
  let dynamo: LocalDynamo | undefined;
  let client: DynamoDBClient;
  if (endpoint) {
    client = localDynamoClient(endpoint);
  } else {
    if (config.dataDir === ':memory:') throw new Error('no local runtime is running and SF_DATA_DIR is :memory:');
    dynamo = await startDynalite(config.dataDir);
    makeDataDirPrivate(config.dataDir);
    client = embeddedDynamoClient(dynamo);
    await createTables(client, config.tables);
  }
  const repos = createRepositories(client, config.tables, {
    emailRetentionSeconds: config.emailRetentionSeconds,
    emailBodies: localEmailBodies(config.dataDir),
  });
  const clock = { now: () => Date.now() };
  // The runtime's own URL when one runs; else where `npm start` would listen with this environment.
  const baseUrl = running?.url ?? config.publicUrl ?? `http://127.0.0.1:${process.env.PORT ?? 3000}/v1`;
  return {
    dashboard: { sessions: repos.sessions, accounts: repos.accounts, clock, random: randomBytes, baseUrl },
    upgradeEmails: async () => ({
      ...(await upgradeEmails(documentClient(client), config.tables, {
        retentionSeconds: config.emailRetentionSeconds,
        bodies: localEmailBodies(config.dataDir),
      })),
      statuses: await backfillEmailStatuses(documentClient(client), config.tables.emails, config.tables.emailEvents),
    }),
    upgradeSuppressions: () => upgradeSuppressions(documentClient(client), config.tables.suppressions),
    reputation: { store: repos.reputationStore, policy: config.reputation, clock },
    // Files in the data directory: read (and moved back) whether or not a runtime runs on it.
    inboundFailures: async () => {
      const dir = inboundDeadDir(running?.dataDir ?? config.dataDir);
      return readDeadLetters(dir).map((letter) => ({ ...letter, file: join(dir, `${letter.id}.msg`) }));
    },
    retryInboundFailure: async (id) => redriveDeadLetter(running?.dataDir ?? config.dataDir, id),
    deps: {
      ...repos,
      usagePlans: noUsagePlans,
      authorizerCache: cache,
      clock: { now: () => Date.now() },
      random: randomBytes,
    },
    async close() {
      client.destroy();
      await dynamo?.close();
    },
  };
}
