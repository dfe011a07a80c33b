// DynamoDB clients for the local runtime and the manifest's tables. The runtime's own client reaches the
// embedded dynalite (dynalite.ts) over its thread's MessagePort (`embeddedDynamoClient`); everything else uses
// its loopback HTTP endpoint (`localDynamoClient`). Both doors lead to one store, with the tables CDK deploys.
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  ScanCommand,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type HttpHandler, type HttpRequest, HttpResponse } from '@smithy/core/protocols';
import { backfillEmailStatuses } from '../../adapters/dynamodb/email-history';
import { backfillEmailTenants } from '../../adapters/dynamodb/emails';
import { type TableName, type TableSpec, tables } from '../../manifest';
import { documentClient } from '../document-client';
import type { LocalDynamo } from './dynalite';
import type { StoreLanes } from './request-lane';

/** How long createTables waits for a new table to become ACTIVE. */
const TABLE_ACTIVE_MS = 10_000;

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
export function embeddedDynamoClient(dynamo: LocalDynamo, lanes?: StoreLanes): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    signer: { sign: async (request) => request },
    requestHandler: threadHandler(dynamo, lanes),
    maxAttempts: 2,
  });
}

function threadHandler(dynamo: LocalDynamo, lanes?: StoreLanes): HttpHandler {
  return {
    async handle(request: HttpRequest) {
      // The SDK serializes JSON to bytes; they cross to the thread as they are.
      const body = request.body as string | Uint8Array | undefined;
      const bytes = typeof body === 'string' || body === undefined ? Buffer.from(body ?? '') : body;
      const target = String(request.headers['x-amz-target']);
      const answer = await (lanes
        ? lanes.run(lanes.lane(), () => dynamo.request(target, bytes))
        : dynamo.request(target, bytes));
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
            // The manifest's projection, as on AWS: an index query returns what the entry holds, no more.
            Projection:
              index.projection?.type === 'INCLUDE'
                ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...index.projection.attributes] }
                : { ProjectionType: index.projection?.type ?? ('ALL' as const) },
          })),
        }
      : {}),
  };
}

/**
 * Creates every manifest table that does not exist yet, and rebuilds one whose indexes are not the manifest's
 * (a data directory made before an index was renamed or changed its projection).
 */
/**
 * What a table's items need when an index of it keys on an attribute older items lack (DynamoDB's own backfill
 * only indexes items that have it): run once, when the local table is rebuilt with its new indexes.
 */
const AFTER_REBUILD: Partial<
  Record<TableName, (doc: DynamoDBDocumentClient, names: Readonly<Record<TableName, string>>) => Promise<unknown>>
> = {
  emails: (doc, names) => backfillEmailTenants(doc, names.emails),
  emailEvents: (doc, names) => backfillEmailStatuses(doc, names.emails, names.emailEvents),
};

/** Creates the manifest's tables; a table whose indexes changed is rebuilt. Returns the tables it rebuilt. */
export async function createTables(
  client: DynamoDBClient,
  names: Readonly<Record<TableName, string>>,
): Promise<TableName[]> {
  const created: string[] = [];
  const rebuilt: TableName[] = [];
  for (const [table, spec] of Object.entries(tables) as [TableName, TableSpec][]) {
    const input = createTableInput(names[table], spec);
    try {
      await client.send(new CreateTableCommand(input));
      created.push(names[table]);
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
      const existing = await untilActive(client, names[table]);
      if (indexesOf(existing) !== indexesOf(input)) {
        await rebuild(client, input);
        await AFTER_REBUILD[table]?.(documentClient(client), names);
        rebuilt.push(table);
      }
    }
  }
  // A new table is CREATING for a moment (a timer in dynalite, longer on DynamoDB Local), and refuses items.
  for (const name of created) await untilActive(client, name);
  return rebuilt;
}

/** The indexes of a table, as a comparable string: names, keys and projections. */
function indexesOf(table: Pick<TableDescription, 'GlobalSecondaryIndexes'>): string {
  const indexes = (table.GlobalSecondaryIndexes ?? []).map((index) => ({
    name: index.IndexName,
    keys: index.KeySchema?.map((key) => `${key.AttributeName}:${key.KeyType}`),
    projection: index.Projection?.ProjectionType ?? 'ALL',
    attributes: [...(index.Projection?.NonKeyAttributes ?? [])].sort(),
  }));
  return JSON.stringify(indexes.sort((a, b) => String(a.name).localeCompare(String(b.name))));
}

/**
 * Replaces a table by one made from `input`, with the same items. Local only: dynalite cannot add an index to
 * a table, and DynamoDB's own way (one index at a time, backfilled) is the operator's on AWS
 * (docs/runbook.md ("Upgrading a stage across an index change")). The items are held in memory meanwhile, which a development data directory allows.
 */
async function rebuild(client: DynamoDBClient, input: CreateTableCommandInput): Promise<void> {
  const name = input.TableName as string;
  const items: Record<string, AttributeValue>[] = [];
  let cursor: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: name, ExclusiveStartKey: cursor }));
    items.push(...(page.Items ?? []));
    cursor = page.LastEvaluatedKey;
  } while (cursor);
  await client.send(new DeleteTableCommand({ TableName: name }));
  await untilGone(client, name);
  await client.send(new CreateTableCommand(input));
  await untilActive(client, name);
  for (let i = 0; i < items.length; i += 25) {
    let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests.length) {
      const { UnprocessedItems } = await client.send(new BatchWriteItemCommand({ RequestItems: { [name]: requests } }));
      requests = (UnprocessedItems?.[name] ?? []) as typeof requests;
    }
  }
}

async function untilGone(client: DynamoDBClient, name: string): Promise<void> {
  for (let waited = 0; waited < TABLE_ACTIVE_MS; waited += 10) {
    try {
      await client.send(new DescribeTableCommand({ TableName: name }));
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`Table ${name} was not deleted within ${TABLE_ACTIVE_MS} ms`);
}

/** Waits until the table is ACTIVE; its description then. */
async function untilActive(client: DynamoDBClient, name: string): Promise<TableDescription> {
  for (let waited = 0; waited < TABLE_ACTIVE_MS; waited += 10) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE') return Table;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`Table ${name} did not become ACTIVE within ${TABLE_ACTIVE_MS} ms`);
}
