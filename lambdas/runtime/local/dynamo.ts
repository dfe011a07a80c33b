// The local DynamoDB: dynalite in-process on a loopback port, on disk or in memory, with the manifest's
// tables created at start. The same lib-dynamodb repositories run against it as against AWS.
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DynamoDBClient,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { type TableName, type TableSpec, tables } from '../../manifest';

export interface LocalDynamo {
  readonly endpoint: string;
  close(): Promise<void>;
}

export class DataDirError extends Error {}

/** Starts dynalite on 127.0.0.1 (any free port). `dataDir` is a directory or `:memory:`. */
export async function startDynalite(dataDir: string): Promise<LocalDynamo> {
  const onDisk = dataDir !== ':memory:';
  if (onDisk) {
    try {
      mkdirSync(dataDir, { recursive: true });
    } catch (error) {
      throw new DataDirError(`Cannot use data directory ${dataDir}: ${(error as Error).message}`, { cause: error });
    }
  }
  const server = dynalite({
    ...(onDisk ? { path: dataDir } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
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
