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

/** Thread → parent: the answer to request `id`, or (id 0) `ready`, `failed` at start, `closed`. */
type ThreadMessage = ThreadAnswer | ThreadControl;
interface ThreadAnswer {
  readonly id: number;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}
type ThreadControl =
  | { readonly id: 0; readonly ready: { readonly port: number } }
  | { readonly id: 0; readonly failed: string }
  | { readonly id: 0; readonly closed: true };

export interface LocalDynamo {
  /** The loopback HTTP endpoint, for clients outside the runtime. */
  readonly endpoint: string;
  /** Sends one DynamoDB JSON request to the thread and resolves with its answer. */
  request(target: string, body: Uint8Array): Promise<ThreadAnswer>;
  /** Lets the requests already sent finish (up to a few seconds), then closes the store and ends the thread. */
  close(): Promise<void>;
}

export class DataDirError extends Error {}

export interface DynaliteOptions extends Pick<ThreadOptions, 'preload'> {
  /** Called once if the thread dies on its own (not after close): every request from then on fails. */
  readonly onFailure?: (error: Error) => void;
}

/** How long the thread may take to start, and how long close() waits for requests in flight. */
const START_MS = 30_000;
const DRAIN_MS = 5_000;

/** Starts dynalite in a worker thread. `dataDir` is a directory or `:memory:`. */
export async function startDynalite(dataDir: string, options: DynaliteOptions = {}): Promise<LocalDynamo> {
  const onDisk = dataDir !== ':memory:';
  if (onDisk) {
    try {
      mkdirSync(dataDir, { recursive: true });
    } catch (error) {
      throw new DataDirError(`Cannot use data directory ${dataDir}: ${(error as Error).message}`, { cause: error });
    }
  }
  const cannotOpen = (reason: string) =>
    onDisk
      ? new DataDirError(
          `Cannot open data directory ${dataDir} (${reason}); is another Sendflow running on it? ` +
            'Set SF_DATA_DIR to another directory or :memory:.',
        )
      : new Error(`The embedded DynamoDB did not start: ${reason}`);
  const workerData: ThreadOptions = {
    ...(onDisk ? { path: dataDir } : {}),
    ...(options.preload ? { preload: options.preload } : {}),
  };
  const thread = new Worker(new URL('./dynalite-thread.mjs', import.meta.url), { workerData });
  const waiting = new Map<number, { resolve(answer: ThreadAnswer): void; reject(error: Error): void }>();
  let control: { resolve(message: ThreadControl): void; reject(error: Error): void } | undefined;
  let failure: Error | undefined;
  let running = false;
  let closing: Promise<void> | undefined;
  const fail = (error: Error) => {
    if (failure) return;
    failure = new Error(`The embedded DynamoDB stopped: ${error.message}`, { cause: error });
    for (const pending of waiting.values()) pending.reject(failure);
    waiting.clear();
    control?.reject(failure);
    if (running && !closing) options.onFailure?.(failure);
  };
  thread.on('message', (message: ThreadMessage) => {
    if (message.id === 0) return control?.resolve(message as ThreadControl);
    waiting.get(message.id)?.resolve(message as ThreadAnswer);
    waiting.delete(message.id);
  });
  thread.on('error', fail);
  thread.on('exit', (code) => fail(new Error(`its thread exited (code ${code})`)));
  const controlMessage = (message?: ThreadRequest) =>
    new Promise<ThreadControl>((resolve, reject) => {
      if (failure) return reject(failure);
      control = { resolve, reject };
      if (message) thread.postMessage(message);
    });

  const started = await withTimeout(controlMessage(), START_MS).catch((error: Error) => ({
    id: 0 as const,
    failed: (error.cause as Error | undefined)?.message ?? error.message,
  }));
  if (!('ready' in started)) {
    await thread.terminate();
    throw cannotOpen('failed' in started ? started.failed : 'it did not start');
  }
  running = true;
  const inFlight = new Set<Promise<unknown>>();
  let next = 1;
  return {
    endpoint: `http://127.0.0.1:${started.ready.port}`,
    request(target, body) {
      if (failure) return Promise.reject(failure);
      if (closing) return Promise.reject(new Error('The embedded DynamoDB is closing'));
      const id = next++;
      const answer = new Promise<ThreadAnswer>((resolve, reject) => waiting.set(id, { resolve, reject }));
      // A view into a larger pool buffer would be cloned whole: send only its bytes.
      thread.postMessage({ id, target, body: body.slice() } satisfies ThreadRequest);
      const settled = answer.catch(() => {}).finally(() => inFlight.delete(settled));
      inFlight.add(settled);
      return answer;
    },
    close() {
      closing ??= (async () => {
        // dynalite would close its store under a request it is still working on: let those finish first.
        await withTimeout(Promise.all(inFlight), DRAIN_MS).catch(() => {});
        if (!failure) await controlMessage({ id: 0, target: '', body: new Uint8Array() }).catch(() => {});
        await thread.terminate();
      })();
      return closing;
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
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
      const body = request.body as string | Uint8Array | undefined;
      const bytes = typeof body === 'string' || body === undefined ? Buffer.from(body ?? '') : body;
      const answer = await dynamo.request(String(request.headers['x-amz-target']), bytes);
      const response = new HttpResponse({
        statusCode: answer.status,
        headers: answer.headers,
        body: Buffer.from(answer.body),
      });
      return { response };
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
