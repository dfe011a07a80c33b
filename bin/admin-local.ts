// The admin CLI's local target: the DynamoDB endpoint of the local runtime running from this checkout
// (announced in its state file), or, when none runs, the data directory opened directly.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { noUsagePlans, outOfProcessAuthorizerCache } from '../lambdas/adapters/local/usage-plans';
import { loadConfig, localTableDefaults } from '../lambdas/runtime/config';
import { type LocalDynamo, startDynalite } from '../lambdas/runtime/local/dynalite';
import { createTables, embeddedDynamoClient, localDynamoClient } from '../lambdas/runtime/local/dynamo';
import { createRepositories } from '../lambdas/runtime/repositories';
import type { AdminSession } from './admin';
import { localStateFile } from './local-state';

export async function localAdminDeps(): Promise<AdminSession> {
  const config = loadConfig(process.env, localTableDefaults());
  const endpoint = process.env.SF_DYNAMODB_ENDPOINT ?? runningRuntimeEndpoint();
  let dynamo: LocalDynamo | undefined;
  let client: DynamoDBClient;
  if (endpoint) {
    client = localDynamoClient(endpoint);
  } else {
    if (config.dataDir === ':memory:') throw new Error('no local runtime is running and SF_DATA_DIR is :memory:');
    dynamo = await startDynalite(config.dataDir);
    client = embeddedDynamoClient(dynamo);
    await createTables(client, config.tables);
  }
  const repos = createRepositories(client, config.tables);
  return {
    deps: {
      ...repos,
      usagePlans: noUsagePlans,
      authorizerCache: outOfProcessAuthorizerCache,
      clock: { now: () => Date.now() },
      random: randomBytes,
    },
    async close() {
      client.destroy();
      await dynamo?.close();
    },
  };
}

/** The endpoint a live local runtime announced, if its process still exists. */
function runningRuntimeEndpoint(): string | undefined {
  try {
    const state = JSON.parse(readFileSync(localStateFile(), 'utf8')) as { pid: number; dynamoEndpoint: string };
    process.kill(state.pid, 0);
    return state.dynamoEndpoint;
  } catch {
    return undefined;
  }
}
