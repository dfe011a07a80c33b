// The local DynamoDB: dynalite in its own thread of this process, on disk or in memory, with the manifest's
// tables created at start. The same lib-dynamodb repositories run against it as against AWS. The runtime's own
// client reaches it over the thread's MessagePort (`embeddedDynamoClient`); everything else over its loopback
// HTTP endpoint (`localDynamoClient`). Both doors lead to one store.
import { mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DynamoDBClient,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import { type HttpHandler, type HttpRequest, HttpResponse } from '@smithy/core/protocols';
import { type TableName, type TableSpec, tables } from '../../manifest';

/** What the thread (dynalite-thread.mjs) starts with. */
interface ThreadOptions {
  /** A directory, or absent for memory. */
  readonly path?: string;
  /** A module imported in the thread before dynalite starts (a benchmark meters dynalite's index writes so). */
  readonly preload?: string;
}

/** Parent → thread: one DynamoDB request (`id` > 0), or `close` (id 0). */
interface ThreadRequest {
  readonly id: number;
  readonly target: string;
  readonly body: Uint8Array;
}

/** Thread → parent: the answer to request `id`, or `ready` / `closed` (id 0). */
type ThreadMessage =
  | { readonly id: number; readonly status: number; readonly headers: Record<string, string>; readonly body: string }
  | { readonly id: 0; readonly ready: { readonly port: number } }
  | { readonly id: 0; readonly closed: true };

export interface LocalDynamo {
  /** The loopback HTTP endpoint, for clients outside the runtime. */
  readonly endpoint: string;
  /** Sends one DynamoDB JSON request to the thread and resolves with its answer. */
  request(target: string, body: Uint8Array): Promise<{ status: number; headers: Record<string, string>; body: string }>;
  close(): Promise<void>;
}

export class DataDirError extends Error {}

/** Starts dynalite in a worker thread. `dataDir` is a directory or `:memory:`. */
export async function startDynalite(
  dataDir: string,
  options: Pick<ThreadOptions, 'preload'> = {},
): Promise<LocalDynamo> {
  const onDisk = dataDir !== ':memory:';
  if (onDisk) {
    try {
      mkdirSync(dataDir, { recursive: true });
    } catch (error) {
      throw new DataDirError(`Cannot use data directory ${dataDir}: ${(error as Error).message}`, { cause: error });
    }
  }
  const workerData: ThreadOptions = { ...(onDisk ? { path: dataDir } : {}), ...options };
  const thread = new Worker(new URL('./dynalite-thread.mjs', import.meta.url), { workerData });
  const waiting = new Map<number, (message: ThreadMessage) => void>();
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure = new Error(`The embedded DynamoDB stopped: ${error.message}`, { cause: error });
    for (const resolve of waiting.values()) resolve({ id: 0, status: 500, headers: {}, body: failure.message });
    waiting.clear();
  };
  thread.on('message', (message: ThreadMessage) => {
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  thread.once('error', fail);
  thread.once('exit', (code) => fail(new Error(`thread exited with code ${code}`)));
  const control = (message: ThreadRequest | undefined) =>
    new Promise<ThreadMessage>((resolve, reject) => {
      if (failure) return reject(failure);
      waiting.set(0, resolve);
      if (message) thread.postMessage(message);
    });

  const ready = await control(undefined);
  if (!('ready' in ready)) throw failure ?? new Error('The embedded DynamoDB did not start');
  let next = 1;
  return {
    endpoint: `http://127.0.0.1:${ready.ready.port}`,
    request: (target, body) =>
      new Promise((resolve, reject) => {
        if (failure) return reject(failure);
        const id = next++;
        waiting.set(id, (message) => ('status' in message && message.id ? resolve(message) : reject(failure)));
        thread.postMessage({ id, target, body } satisfies ThreadRequest);
      }),
    async close() {
      if (!failure) await control({ id: 0, target: '', body: new Uint8Array() });
      await thread.terminate();
    },
  };
}

/** A DynamoDB client for a local endpoint (dynalite or DynamoDB Local), with dummy credentials. */
export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 2,
  });
}

/**
 * The runtime's client: the same SDK client, whose requests go to dynalite's thread as messages. The thread is
 * in this process, so there is nothing to sign and no socket to open.
 */
export function embeddedDynamoClient(dynamo: LocalDynamo): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    signer: { sign: async (request) => request },
    requestHandler: threadHandler(dynamo),
    maxAttempts: 2,
  });
}

function threadHandler(dynamo: LocalDynamo): HttpHandler {
  return {
    async handle(request: HttpRequest) {
      // The SDK serializes JSON to bytes; they cross to the thread as they are.
      const bytes = typeof request.body === 'string' ? Buffer.from(request.body) : (request.body as Uint8Array);
      const answer = await dynamo.request(String(request.headers['x-amz-target']), bytes);
      const body = Buffer.from(answer.body);
      return { response: new HttpResponse({ statusCode: answer.status, headers: answer.headers, body }) };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
  };
}

export function createTableInput(name: string, spec: TableSpec): CreateTableCommandInput {
  const keys = new Set([
    spec.partitionKey,
    spec.sortKey,
    ...(spec.indexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey]),
  ]);
  return {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...keys]
      .filter((k): k is string => !!k)
      .map((k) => ({ AttributeName: k, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: spec.partitionKey, KeyType: 'HASH' },
      ...(spec.sortKey ? [{ AttributeName: spec.sortKey, KeyType: 'RANGE' as const }] : []),
    ],
    ...(spec.indexes?.length
      ? {
          GlobalSecondaryIndexes: spec.indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: [
              { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
              ...(index.sortKey ? [{ AttributeName: index.sortKey, KeyType: 'RANGE' as const }] : []),
            ],
            Projection: { ProjectionType: 'ALL' as const },
          })),
        }
      : {}),
  };
}

/** Creates every manifest table that does not exist yet. */
export async function createTables(client: DynamoDBClient, names: Readonly<Record<TableName, string>>): Promise<void> {
  for (const [table, spec] of Object.entries(tables) as [TableName, TableSpec][]) {
    try {
      await client.send(new CreateTableCommand(createTableInput(names[table], spec)));
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
  }
}
