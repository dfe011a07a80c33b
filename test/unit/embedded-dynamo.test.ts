// The embedded DynamoDB: dynalite in its own thread, reached by the runtime's client over a MessagePort and by
// everything else over loopback HTTP. Both doors lead to one store; errors come back as the SDK's own
// exceptions; an on-disk store survives a restart; a stopped thread fails requests instead of hanging them.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TableName, tableNames } from '../../lambdas/manifest';
import {
  DataDirError,
  DataDirLockedError,
  type LocalDynamo,
  startDynalite,
} from '../../lambdas/runtime/local/dynalite';
import { createTables, embeddedDynamoClient, localDynamoClient } from '../../lambdas/runtime/local/dynamo';

/** Lets tests crash dynalite's thread or slow a request down (see the file). */
const TEST_PRELOAD = new URL('../support/dynalite-test-preload.mjs', import.meta.url).href;
const tables = Object.fromEntries(tableNames.map((t) => [t, `ed-${t}`])) as Record<TableName, string>;
const doc = (client: DynamoDBClient) => DynamoDBDocumentClient.from(client);

describe('embedded dynalite', () => {
  let dynamo: LocalDynamo;
  let embedded: DynamoDBClient;
  let http: DynamoDBClient;

  beforeAll(async () => {
    dynamo = await startDynalite(':memory:');
    embedded = embeddedDynamoClient(dynamo);
    http = localDynamoClient(dynamo.endpoint);
    await createTables(embedded, tables);
  });

  afterAll(async () => {
    embedded.destroy();
    http.destroy();
    await dynamo.close();
  });

  it('serves the embedded client and the HTTP endpoint from one store', async () => {
    // Arrange
    const item = { id: 'acct_both', plan: 'free', createdAt: '2026-01-01T00:00:00.000Z' };

    // Act
    await doc(embedded).send(new PutCommand({ TableName: tables.accounts, Item: item }));
    const overHttp = await doc(http).send(new GetCommand({ TableName: tables.accounts, Key: { id: item.id } }));
    await doc(http).send(new PutCommand({ TableName: tables.accounts, Item: { ...item, plan: 'pro' } }));
    const embeddedRead = await doc(embedded).send(
      new GetCommand({ TableName: tables.accounts, Key: { id: item.id }, ConsistentRead: true }),
    );

    // Assert
    expect(overHttp.Item).toEqual(item);
    expect(embeddedRead.Item).toEqual({ ...item, plan: 'pro' });
  });

  it('returns a failed condition as ConditionalCheckFailedException and leaves the item as it was', async () => {
    // Arrange
    const item = { id: 'acct_cond', plan: 'free', createdAt: '2026-01-01T00:00:00.000Z' };
    await doc(embedded).send(new PutCommand({ TableName: tables.accounts, Item: item }));

    // Act
    const failure = await doc(embedded)
      .send(
        new PutCommand({
          TableName: tables.accounts,
          Item: { ...item, plan: 'scale' },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      )
      .catch((error: unknown) => error);

    // Assert
    expect(failure).toBeInstanceOf(ConditionalCheckFailedException);
    const stored = await doc(http).send(new GetCommand({ TableName: tables.accounts, Key: { id: item.id } }));
    expect(stored.Item).toEqual(item);
  });

  it('returns an unknown table as ResourceNotFoundException', async () => {
    // Act
    const failure = await doc(embedded)
      .send(new GetCommand({ TableName: 'ed-no-such-table', Key: { id: 'x' } }))
      .catch((error: unknown) => error);

    // Assert
    expect(failure).toBeInstanceOf(ResourceNotFoundException);
  });

  it('answers concurrent requests each with its own result', async () => {
    // Arrange
    const ids = Array.from({ length: 200 }, (_, i) => `acct_c${i}`);

    // Act
    await Promise.all(
      ids.map((id, i) =>
        doc(embedded).send(new PutCommand({ TableName: tables.accounts, Item: { id, plan: `p${i}`, createdAt: 'x' } })),
      ),
    );
    const reads = await Promise.all(
      ids.map((id) => doc(embedded).send(new GetCommand({ TableName: tables.accounts, Key: { id } }))),
    );

    // Assert
    expect(reads.map((r) => r.Item?.plan)).toEqual(ids.map((_, i) => `p${i}`));
  });

  it('carries non-ASCII text and large items byte for byte', async () => {
    // Arrange
    const text = `Grüße, 世界 🚀 ${'x'.repeat(300_000)}`;

    // Act
    await doc(embedded).send(new PutCommand({ TableName: tables.accounts, Item: { id: 'acct_utf8', text } }));
    const read = await doc(http).send(
      new QueryCommand({
        TableName: tables.accounts,
        KeyConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': 'acct_utf8' },
      }),
    );

    // Assert
    expect(read.Items?.[0]?.text).toBe(text);
  });
});

describe('embedded dynalite on disk', () => {
  let dir: string;
  let dynamo: LocalDynamo | undefined;

  afterEach(async () => {
    await dynamo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps what it stored across a close and a restart on the same directory', async () => {
    // Arrange
    dir = mkdtempSync(join(tmpdir(), 'sf-embedded-'));
    const first = await startDynalite(dir);
    const firstClient = embeddedDynamoClient(first);
    await createTables(firstClient, tables);
    await doc(firstClient).send(new PutCommand({ TableName: tables.accounts, Item: { id: 'acct_disk', plan: 'pro' } }));
    firstClient.destroy();
    await first.close();

    // Act
    dynamo = await startDynalite(dir);
    const read = await doc(embeddedDynamoClient(dynamo)).send(
      new GetCommand({ TableName: tables.accounts, Key: { id: 'acct_disk' } }),
    );

    // Assert
    expect(read.Item).toEqual({ id: 'acct_disk', plan: 'pro' });
  });

  it('lets the requests it is working on finish before it closes the store', async () => {
    // Arrange: a table whose requests dynalite holds for 100 ms (test preload)
    dir = mkdtempSync(join(tmpdir(), 'sf-embedded-'));
    const first = await startDynalite(dir, { preload: TEST_PRELOAD });
    await embeddedDynamoClient(first).send(
      new CreateTableCommand({
        TableName: 'ed-slow',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Act: five PutItems handed to the thread, then close() at once
    const writes = Array.from({ length: 5 }, (_, i) =>
      first.request(
        'DynamoDB_20120810.PutItem',
        Buffer.from(JSON.stringify({ TableName: 'ed-slow', Item: { id: { S: `late${i}` } } })),
      ),
    );
    const closed = first.close();
    const answers = await Promise.all(writes);
    await closed;

    // Assert
    expect(answers.map((answer) => answer.status)).toEqual(Array(5).fill(200));
    dynamo = await startDynalite(dir);
    const reopened = doc(embeddedDynamoClient(dynamo));
    for (let i = 0; i < 5; i++) {
      const read = await reopened.send(new GetCommand({ TableName: 'ed-slow', Key: { id: `late${i}` } }));
      expect(read.Item).toEqual({ id: `late${i}` });
    }
  });

  it('settles every close() call, however many run at once, and refuses requests once closing', async () => {
    // Arrange
    dir = mkdtempSync(join(tmpdir(), 'sf-embedded-'));
    const closing = await startDynalite(dir);
    const client = embeddedDynamoClient(closing);

    // Act
    const closes = [closing.close(), closing.close()];
    const late = await doc(client)
      .send(new GetCommand({ TableName: tables.accounts, Key: { id: 'x' } }))
      .catch((error: unknown) => error);
    await Promise.all(closes);
    const after = await doc(client)
      .send(new GetCommand({ TableName: tables.accounts, Key: { id: 'x' } }))
      .catch((error: unknown) => error);

    // Assert
    expect((late as Error).message).toMatch(/embedded DynamoDB is closing/);
    expect((after as Error).message).toMatch(/embedded DynamoDB (is closing|stopped)/);
  });

  it('deletes the files compaction replaces while Queries and Scans cut short by Limit run, so it stays near its live size', async () => {
    // Arrange: 10 items of 100 KB (1 MB live), overwritten 320 times (32 MB written), a Query and a Scan with
    // Limit after each write, as the runtime's queues and reconciler do
    dir = mkdtempSync(join(tmpdir(), 'sf-embedded-'));
    dynamo = await startDynalite(dir);
    const embedded = embeddedDynamoClient(dynamo);
    await createTables(embedded, tables);
    const client = doc(embedded);
    const value = randomBytes(75_000).toString('base64');
    const table = tables.accounts;

    // Act
    for (let i = 0; i < 320; i++) {
      await client.send(new PutCommand({ TableName: table, Item: { id: `acct_${i % 10}`, value: `${i}${value}` } }));
      await client.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'id = :id',
          ExpressionAttributeValues: { ':id': 'acct_1' },
          Limit: 1,
        }),
      );
      await client.send(new ScanCommand({ TableName: table, Limit: 1 }));
    }
    const settled = await settledSize(dir);

    // Assert: less than was written. LevelDB keeps a 4 MB log and up to four 4 MB level-0 files before it
    // compacts them (12 MB here); with every Query's iterator left open, no file was ever deleted (78 MB).
    expect(settled / 1e6).toBeLessThan(32);
  });

  it('keeps its directory 0700 and every file in it 0600, those of an older run and those it writes later', async () => {
    // Arrange: a directory left readable to all by an older run, with a file in it
    dir = mkdtempSync(join(tmpdir(), 'sf-embedded-'));
    const data = join(dir, 'data');
    mkdirSync(data);
    chmodSync(data, 0o755);
    writeFileSync(join(data, 'OLD.log'), 'x');
    chmodSync(join(data, 'OLD.log'), 0o644);

    // Act: enough writes for LevelDB to write a table file (its memtable holds 4 MB)
    dynamo = await startDynalite(data);
    const embedded = embeddedDynamoClient(dynamo);
    await createTables(embedded, tables);
    const value = randomBytes(75_000).toString('base64');
    for (let i = 0; i < 60; i++) {
      await doc(embedded).send(new PutCommand({ TableName: tables.accounts, Item: { id: `acct_${i}`, value } }));
    }
    await dynamo.close();
    dynamo = undefined;

    // Assert
    const files = readdirSync(data);
    expect(files.some((file) => file.endsWith('.ldb'))).toBe(true);
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(Object.fromEntries(files.map((file) => [file, statSync(join(data, file)).mode & 0o777]))).toEqual(
      Object.fromEntries(files.map((file) => [file, 0o600])),
    );
  });

  it('refuses a data directory another embedded DynamoDB holds, with a clear DataDirError', async () => {
    // Arrange
    dir = mkdtempSync(join(tmpdir(), 'sf-embedded-'));
    dynamo = await startDynalite(dir);

    const onFailure = vi.fn();

    // Act
    const second = await startDynalite(dir, { onFailure }).catch((error: unknown) => error);

    // Assert
    expect(second).toBeInstanceOf(DataDirError);
    expect(onFailure).not.toHaveBeenCalled();
    expect((second as Error).message).toMatch(/^Cannot open data directory .*; is another Sendflow running on it\?/);
  });

  it('waits for the lock of a directory another DynamoDB holds, saying so once, and opens it once let go', async () => {
    // Arrange
    dir = mkdtempSync(join(tmpdir(), 'sf-embedded-'));
    const first = await startDynalite(dir);
    const onLockWait = vi.fn();

    // Act: the first lets go after 1 s; the second may wait 10 s.
    const releasing = new Promise((resolve) => setTimeout(resolve, 1_000)).then(() => first.close());
    const started = Date.now();
    dynamo = await startDynalite(dir, { lockWaitMs: 10_000, onLockWait });
    await releasing;

    // Assert
    expect(onLockWait).toHaveBeenCalledOnce();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(dynamo.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('stops waiting for a held lock after lockWaitMs, with the clear DataDirError', async () => {
    // Arrange
    dir = mkdtempSync(join(tmpdir(), 'sf-embedded-'));
    dynamo = await startDynalite(dir);
    const started = Date.now();

    // Act
    const second = await startDynalite(dir, { lockWaitMs: 1_000 }).catch((error: unknown) => error);

    // Assert
    expect(second).toBeInstanceOf(DataDirLockedError);
    expect((second as Error).message).toMatch(/^Cannot open data directory .*; is another Sendflow running on it\?/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('createTables on the embedded dynalite', () => {
  it('returns only once every table is ACTIVE, so the first write to each succeeds', async () => {
    // Arrange: new tables stay CREATING for 300 ms (test preload)
    const slow = await startDynalite(':memory:', { preload: `${TEST_PRELOAD}?createTableMs=300` });
    const client = embeddedDynamoClient(slow);

    try {
      // Act
      await createTables(client, tables);
      const statuses = await Promise.allSettled(
        Object.values(tables).map((name) =>
          client.send(new DescribeTableCommand({ TableName: name })).then(({ Table }) => Table?.TableStatus),
        ),
      );
      const put = await doc(client)
        .send(new PutCommand({ TableName: tables.accounts, Item: { id: 'acct_first', plan: 'free' } }))
        .then(() => 'stored')
        .catch((error: unknown) => (error as Error).name);

      // Assert
      expect(statuses.map((w) => (w.status === 'fulfilled' ? w.value : 'failed'))).toEqual(
        Object.values(tables).map(() => 'ACTIVE'),
      );
      expect(put).toBe('stored');
    } finally {
      client.destroy();
      await slow.close();
    }
  });
});

describe('embedded dynalite that dies', () => {
  it('fails the requests it held and every later one, and reports the failure once', async () => {
    // Arrange
    const failures: Error[] = [];
    const crashing = await startDynalite(':memory:', {
      preload: TEST_PRELOAD,
      onFailure: (error) => failures.push(error),
    });
    const client = doc(embeddedDynamoClient(crashing));

    // Act
    const held = await client
      .send(new GetCommand({ TableName: 'crash-now', Key: { id: 'x' } }))
      .catch((error: unknown) => error);
    const later = await client
      .send(new GetCommand({ TableName: 'ed-accounts', Key: { id: 'x' } }))
      .catch((error: unknown) => error);
    await crashing.close();

    // Assert
    expect((held as Error).message).toMatch(/^The embedded DynamoDB stopped: its thread exited \(code 9\)/);
    expect((later as Error).message).toMatch(/^The embedded DynamoDB stopped/);
    expect(failures).toHaveLength(1);
  });

  it('rejects at start when the thread cannot start, instead of hanging', async () => {
    // Act
    const onFailure = vi.fn();
    const failed = await startDynalite(':memory:', {
      preload: 'file:///nonexistent/sendflow-preload.mjs',
      onFailure,
    }).catch((error: unknown) => error);

    // Assert
    expect(onFailure).not.toHaveBeenCalled();
    expect((failed as Error).message).toMatch(/^The embedded DynamoDB did not start: .*sendflow-preload/);
  });
});

/** The bytes under `dir` once LevelDB's background compaction has stopped changing them (up to 5 s). */
async function settledSize(dir: string): Promise<number> {
  const size = () => readdirSync(dir).reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
  let last = size();
  for (let waited = 0; waited < 5_000; waited += 250) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = size();
    if (now === last) return now;
    last = now;
  }
  return last;
}
