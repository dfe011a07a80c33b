// Template assertions for the data stack (lib/data-stack.ts): one DynamoDB table per manifest entry,
// on demand, with PITR, TTL, GSIs, encryption and the retention the manifest asks for.
import type { CfnElement } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { type TableName, type TableSpec, tableNames, tables } from '../../lambdas/manifest';
import { synthSendflow } from './synth';

let data: Template;
let tableParameters: Readonly<Record<TableName, string>>;
let tableIds: Readonly<Record<TableName, string>>;

beforeAll(() => {
  const synth = synthSendflow();
  data = synth.data;
  const stack = synth.stacks.data;
  tableParameters = stack.tableParameters;
  // Partition keys repeat across tables (accounts and emails both use id): ask the construct for its id.
  tableIds = Object.fromEntries(
    tableNames.map((name) => [name, stack.getLogicalId(stack.tables[name].node.defaultChild as CfnElement)]),
  ) as Record<TableName, string>;
});

type Resource = { Properties: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string };

/** Logical id of the manifest table's resource, checked against the manifest's partition key. */
function tableIdFor(name: TableName): string {
  const id = tableIds[name];
  const keys = data.findResources('AWS::DynamoDB::GlobalTable')[id]?.Properties.KeySchema as {
    AttributeName: string;
  }[];
  expect(keys?.[0]?.AttributeName).toBe(tables[name].partitionKey);
  return id;
}

function tableFor(name: TableName): Resource {
  return data.findResources('AWS::DynamoDB::GlobalTable')[tableIdFor(name)] as Resource;
}

describe('tables', () => {
  it('declares exactly one table per manifest entry', () => {
    data.resourceCountIs('AWS::DynamoDB::GlobalTable', tableNames.length);
  });

  it.each(tableNames)('%s is on demand with PITR and encryption', (name) => {
    const table = tableFor(name);
    expect(table.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      SSESpecification: { SSEEnabled: true },
      Replicas: [expect.objectContaining({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
    });
  });

  it.each(tableNames)('%s has the manifest keys, all strings', (name) => {
    const spec: TableSpec = tables[name];
    const table = tableFor(name);
    const expectedKeys = [
      { AttributeName: spec.partitionKey, KeyType: 'HASH' },
      ...(spec.sortKey ? [{ AttributeName: spec.sortKey, KeyType: 'RANGE' }] : []),
    ];
    expect(table.Properties.KeySchema).toEqual(expectedKeys);
    for (const attribute of table.Properties.AttributeDefinitions as { AttributeType: string }[]) {
      expect(attribute.AttributeType).toBe('S');
    }
  });

  it.each(tableNames)('%s has a generated name (no TableName) and carries the stage tag', (name) => {
    const table = tableFor(name);
    expect(table.Properties.TableName).toBeUndefined();
    const replica = (table.Properties.Replicas as { Tags?: { Key: string; Value: string }[] }[])[0];
    expect(replica?.Tags).toContainEqual({ Key: 'sendflow:stage', Value: 'prod' });
  });

  it.each(tableNames)('%s has the TTL attribute the manifest names, if any', (name) => {
    const spec: TableSpec = tables[name];
    const table = tableFor(name);
    if (spec.ttlAttribute) {
      expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: spec.ttlAttribute, Enabled: true });
    } else {
      expect(table.Properties.TimeToLiveSpecification).toBeUndefined();
    }
  });

  it('expires rate-limit windows on expiresAt', () => {
    expect(tableFor('rateLimits').Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expiresAt',
      Enabled: true,
    });
  });

  it('keeps listen sessions and their events in one disposable table (pk, sk) that expires them on expiresAt', () => {
    const table = tableFor('listenSessions').Properties;
    expect(table.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(table.GlobalSecondaryIndexes).toBeUndefined();
  });

  it('keeps sending reputation (counters and standings) in one retained table (pk, sk), counters expiring on expiresAt, with an outbox index', () => {
    const { Properties: table, DeletionPolicy } = tableFor('reputation') as unknown as {
      Properties: Record<string, unknown>;
      DeletionPolicy: string;
    };
    expect(table.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    // A pause must outlive a replaced stack: retained like the other stateful tables.
    expect(DeletionPolicy).toBe('Retain');
    expect((table.GlobalSecondaryIndexes as { IndexName: string }[]).map((index) => index.IndexName)).toEqual([
      'byOutboxEvents',
    ]);
  });

  it('expires emails and everything of theirs (parts, event history) on expiresAt', () => {
    for (const name of ['emails', 'emailParts', 'emailEvents'] as const) {
      expect(tableFor(name).Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    }
  });

  it("keeps an email's body, links and recipient states in emailParts (emailId + part), with its own outbox index (keys and events)", () => {
    const parts = tableFor('emailParts').Properties;
    expect(parts.KeySchema).toEqual([
      { AttributeName: 'emailId', KeyType: 'HASH' },
      { AttributeName: 'part', KeyType: 'RANGE' },
    ]);
    expect(parts.BillingMode).toBe('PAY_PER_REQUEST');
    expect((parts.GlobalSecondaryIndexes as { IndexName: string }[]).map((index) => index.IndexName)).toEqual([
      'byOutboxEvents',
    ]);
  });

  it.each(tableNames)('%s has the manifest GSIs, each with its manifest projection (ALL when none)', (name) => {
    const spec: TableSpec = tables[name];
    const table = tableFor(name);
    const expected = (spec.indexes ?? []).map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        ...(index.sortKey ? [{ AttributeName: index.sortKey, KeyType: 'RANGE' }] : []),
      ],
      Projection:
        index.projection?.type === 'INCLUDE'
          ? { ProjectionType: 'INCLUDE', NonKeyAttributes: index.projection.attributes }
          : { ProjectionType: index.projection?.type ?? 'ALL' },
    }));
    expect(table.Properties.GlobalSecondaryIndexes ?? []).toEqual(expected);
  });

  it('gives every table that records events a sparse outbox index projecting only the events, for the sweep', () => {
    // The relay reads the keys and the `outbox` set (adapters/dynamodb/outbox.ts `due`), nothing else: a
    // scheduled email's body, a domain's records or a contact's fields are not copied into the index.
    for (const name of ['emails', 'domains', 'contacts', 'suppressions'] as const) {
      const indexes = tableFor(name).Properties.GlobalSecondaryIndexes as { IndexName: string }[];
      expect(indexes).toContainEqual({
        IndexName: 'byOutboxEvents',
        KeySchema: [
          { AttributeName: 'outboxShard', KeyType: 'HASH' },
          { AttributeName: 'outboxDue', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['outbox'] },
      });
      expect(indexes.map((index) => index.IndexName)).not.toContain('byOutbox');
    }
  });

  it('expires final deliveries on expiresAt and serves the status filter and the reconciler from small GSIs', () => {
    const deliveries = tableFor('deliveries').Properties;
    expect(deliveries.KeySchema).toEqual([
      { AttributeName: 'webhookId', KeyType: 'HASH' },
      { AttributeName: 'id', KeyType: 'RANGE' },
    ]);
    expect(deliveries.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(deliveries.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'byStatusKey',
        KeySchema: [
          { AttributeName: 'statusKey', KeyType: 'HASH' },
          { AttributeName: 'id', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['expiresAt'] },
      },
      {
        IndexName: 'byDueShard',
        KeySchema: [
          { AttributeName: 'dueShard', KeyType: 'HASH' },
          { AttributeName: 'dueAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['attempts'] },
      },
    ]);
  });

  it('never copies an email whole into an index: byScheduleShard is keys only', () => {
    expect(tableFor('emails').Properties.GlobalSecondaryIndexes).toContainEqual({
      IndexName: 'byScheduleShard',
      KeySchema: [
        { AttributeName: 'scheduleShard', KeyType: 'HASH' },
        { AttributeName: 'sendAt', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    });
  });

  it('lists emails from byTenant (tenant = account#mode, + id), keys only: no email body, no write on updates', () => {
    const indexes = tableFor('emails').Properties.GlobalSecondaryIndexes;
    expect(indexes).toContainEqual({
      IndexName: 'byTenant',
      KeySchema: [
        { AttributeName: 'tenant', KeyType: 'HASH' },
        { AttributeName: 'id', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    });
    expect(JSON.stringify(indexes)).not.toContain('byAccount');
  });

  it('serves API-key listing from the byAccount index on accountId + createdAt', () => {
    expect(tableFor('apiKeys').Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'byAccount',
        KeySchema: [
          { AttributeName: 'accountId', KeyType: 'HASH' },
          { AttributeName: 'createdAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
  });

  it.each(tableNames)('%s is retained (and deletion-protected) exactly when the manifest says so', (name) => {
    const table = tableFor(name);
    const retain = tables[name].retain;
    expect(table.DeletionPolicy).toBe(retain ? 'Retain' : 'Delete');
    expect(table.UpdateReplacePolicy).toBe(retain ? 'Retain' : 'Delete');
    const replica = (table.Properties.Replicas as { DeletionProtectionEnabled?: boolean }[])[0];
    expect(replica?.DeletionProtectionEnabled ?? false).toBe(retain);
  });
});

describe('hand-over to the api stack', () => {
  it('publishes every table name in SSM under the name the api stack resolves', () => {
    for (const name of tableNames) {
      expect(tableParameters[name]).toBe(`/Sendflow-prod-Data/tables/${name}`);
      data.hasResourceProperties('AWS::SSM::Parameter', {
        Name: tableParameters[name],
        Type: 'String',
        Value: { Ref: tableIdFor(name) },
      });
    }
  });

  it('exports nothing: the api stack imports no value, so a table can be replaced', () => {
    for (const output of Object.values(data.findOutputs('*'))) expect(output.Export).toBeUndefined();
  });
});
