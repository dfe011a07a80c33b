// How a port's contract suite gets its subject: the same suite runs against a DynamoDB adapter (on dynalite or
// DynamoDB Local) and against the in-memory fake from test/support/fakes.ts.
import { beforeAll } from 'vitest';
import type { TableName } from '../../../lambdas/manifest';
import { type DynamoEndpointFactory, type DynamoTables, useDynamoTables } from '../../support/dynamo';

export interface RepositoryHarness<R> {
  /** A repository over storage shared by the whole suite: tests keep apart by unique ids. */
  shared(): R;
  /** A repository over new, empty storage, for queries that span every partition (e.g. listDue). */
  fresh(): Promise<R>;
  /** The DynamoDB table behind `shared()`, for checks of the stored layout; absent for fakes. */
  readonly raw?: () => { readonly db: DynamoTables; readonly table: string };
}

/** Registers the endpoint's hooks in the enclosing describe block. */
export function dynamoHarness<R>(
  factory: DynamoEndpointFactory,
  table: TableName,
  build: (db: DynamoTables, tableName: string) => R,
): RepositoryHarness<R> {
  const db = useDynamoTables(factory);
  return {
    shared: () => build(db(), db().tables[table]),
    fresh: async () => build(db(), (await db().freshTables())[table]),
    raw: () => ({ db: db(), table: db().tables[table] }),
  };
}

export function memoryHarness<R>(build: () => R): RepositoryHarness<R> {
  let shared: R | undefined;
  beforeAll(() => {
    shared = build();
  });
  return {
    shared: () => {
      if (!shared) throw new Error('use inside a test');
      return shared;
    },
    fresh: async () => build(),
  };
}
