// The local runtime: the same handlers as on AWS, behind a node:http gateway, on an embedded DynamoDB.
// start() → a running API; stop() → everything closed. Tests start it on port 0.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@aws-lambda-powertools/logger';
import { noUsagePlans } from '../../adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../../app/accounts';
import type { Clock } from '../../app/ports';
import { createAuthorizerHandler } from '../../handlers/authorizer';
import { createApiHandler } from '../../handlers/http/api';
import type { ApiContext } from '../../handlers/http/context';
import { STAGE } from '../../manifest';
import type { Config } from '../config';
import { createLogger } from '../logger';
import { createRepositories } from '../repositories';
import { createTables, localDynamoClient, startDynalite } from './dynamo';
import { createGateway } from './gateway';

/** API Gateway's integration time-out for REST APIs. */
const INTEGRATION_TIMEOUT_MS = 29_000;

export interface LocalRuntime {
  /** Base URL including the stage, e.g. http://127.0.0.1:3000/v1 */
  readonly url: string;
  readonly port: number;
  readonly dynamoEndpoint: string;
  /** Present when this start created the default account on an empty store. */
  readonly seeded?: { accountId: string; apiKey: string };
  stop(): Promise<void>;
}

export interface LocalRuntimeOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export async function startLocalRuntime(config: Config, options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const clock = options.clock ?? { now: () => Date.now() };
  const logger = options.logger ?? createLogger(config);
  const dynamo = await startDynalite(config.dataDir);
  const client = localDynamoClient(dynamo.endpoint);
  let server: Server | undefined;
  try {
    await createTables(client, config.tables);
    const repos = createRepositories(client, config.tables);
    const deps = { ...repos, clock, random: randomBytes, logger };
    const seeded = config.seed ? await seed({ ...deps, usagePlans: noUsagePlans }) : undefined;

    const api = createApiHandler({ ...deps, maxBodyBytes: config.maxBodyBytes, ipRateLimit: config.ipRateLimit });
    const gateway = createGateway({
      authorizer: createAuthorizerHandler(deps),
      api: async (event, context) => {
        const response = await api(event, context as ApiContext, {
          signal: AbortSignal.timeout(INTEGRATION_TIMEOUT_MS),
        });
        if (!response) throw new Error('API handler returned no response');
        return response;
      },
      authCacheTtlSeconds: config.authCacheTtlSeconds,
      clock: () => clock.now(),
    });
    server = createServer((req, res) => void gateway(req, res));
    server.keepAliveTimeout = 5_000;
    await listen(server, config.port, config.host);
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const httpServer = server;
    return {
      url: `http://${host}:${port}/${STAGE}`,
      port,
      dynamoEndpoint: dynamo.endpoint,
      ...(seeded ? { seeded } : {}),
      async stop() {
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          httpServer.closeAllConnections();
        });
        client.destroy();
        await dynamo.close();
      },
    };
  } catch (error) {
    server?.close();
    client.destroy();
    await dynamo.close();
    throw error;
  }
}

async function seed(deps: Parameters<typeof createAccount>[0]) {
  if (await deps.accounts.any()) return undefined;
  const account = await createAccount(deps, 'free');
  const { secret } = await createAccountKey(deps, { accountId: account.id, mode: 'test', name: 'Default test key' });
  return { accountId: account.id, apiKey: secret };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
