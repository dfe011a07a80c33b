// Contract suite for DynamoEmailRepository (EmailRepository port), written once against a DynamoDB endpoint
// factory (dynamodb-repositories.test.ts runs it on dynalite and DynamoDB Local): createMany writes every email
// exactly as given, in BatchWrite chunks of at most 25, retrying what DynamoDB leaves unprocessed; get reads one
// back (the event history lives in its own table: email-history.ts).
import { randomBytes } from 'node:crypto';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../../lambdas/adapters/dynamodb/emails';
import type { EmailRecord } from '../../../lambdas/app/emails/ports';
import { localDynamoClient } from '../../../lambdas/runtime/local/dynamo';
import { type DynamoEndpointFactory, type DynamoTables, useDynamoTables } from '../../support/dynamo';

function newEmail(i: number, overrides: Partial<EmailRecord> = {}): EmailRecord {
  return {
    id: `em_${randomBytes(8).toString('hex')}_${i}`,
    accountId: 'acct_contract',
    mode: 'test',
    from: 'Acme <billing@acme.example>',
    to: [`user${i}@example.com`],
    cc: i % 2 ? ['cc@example.com'] : [],
    bcc: [],
    replyTo: [],
    subject: `Invoice #${i}`,
    html: `<p>Hello ${i}</p>`,
    headers: { 'X-Entity-Ref-ID': `ref-${i}` },
    tags: [{ name: 'category', value: 'invoice' }],
    createdAt: '2025-04-01T10:00:00.000Z',
    suppressed: i % 3 === 0 ? [`blocked${i}@example.com`] : [],
    unsubscribeUrls: { [`user${i}@example.com`]: `https://api.sendflow.test/v1/unsubscribe/tok${i}` },
    ...overrides,
  };
}

/** Reads items back by id (BatchGet, 100 keys a request), in the order asked. */
async function readBack(db: DynamoTables, table: string, ids: readonly string[]): Promise<unknown[]> {
  const found = new Map<string, unknown>();
  for (let i = 0; i < ids.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = ids.slice(i, i + 100).map((id) => ({ id }));
    while (keys?.length) {
      const { Responses, UnprocessedKeys } = await db.doc.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: keys } } }),
      );
      // The byScheduleShard and byTenant index keys (scheduleShard, sendAt, tenant) are storage, not the email: leave them out. Headers
      // are stored as [name, value] pairs (a map could not hold one named `constructor`): read them as a record.
      for (const { scheduleShard: _shard, sendAt: _at, tenant: _tenant, headers, ...item } of Responses?.[table] ?? [])
        found.set(String(item.id), { ...item, headers: Object.fromEntries(headers as [string, string][]) });
      keys = UnprocessedKeys?.[table]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return ids.map((id) => found.get(id));
}

/** A document client that counts BatchWrite requests and their sizes, optionally leaving some unprocessed. */
function instrumentedClient(endpoint: string, unprocessedOnFirstCall = 0) {
  const batchSizes: number[] = [];
  const client = localDynamoClient(endpoint);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!['BatchWriteCommand', 'BatchWriteItemCommand'].includes(context.commandName ?? '')) return next(args);
      const input = args.input as { RequestItems: Record<string, unknown[]> };
      const [table, requests] = Object.entries(input.RequestItems)[0] as [string, unknown[]];
      batchSizes.push(requests.length);
      if (batchSizes.length === 1 && unprocessedOnFirstCall > 0) {
        // Pretend DynamoDB processed only the first items of the first request (throttling).
        const kept = requests.slice(0, requests.length - unprocessedOnFirstCall);
        const left = requests.slice(requests.length - unprocessedOnFirstCall);
        input.RequestItems[table] = kept;
        const result = await next(args);
        (result.output as { UnprocessedItems?: unknown }).UnprocessedItems = { [table]: left };
        return result;
      }
      return next(args);
    },
    { step: 'initialize', name: 'countBatchWrites' },
  );
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return { doc, batchSizes, destroy: () => client.destroy() };
}

export function emailRepositoryContract(factory: DynamoEndpointFactory): void {
  const db = useDynamoTables(factory);
  let repo: DynamoEmailRepository;

  beforeEach(() => {
    repo = new DynamoEmailRepository(db().doc, db().tables.emails);
  });

  it('stores one email exactly as given', async () => {
    // Arrange
    const email = newEmail(1, { text: 'Hello 1', replyTo: ['support@acme.example'] });

    // Act
    await repo.createMany([email]);

    // Assert
    expect(await readBack(db(), db().tables.emails, [email.id])).toEqual([email]);
  });

  it('stores more than 25 emails (61: chunks of 25, 25, 11), each exactly as given', async () => {
    // Arrange
    const emails = Array.from({ length: 61 }, (_, i) => newEmail(i));
    const counted = instrumentedClient(db().endpoint);

    try {
      // Act
      await new DynamoEmailRepository(counted.doc, db().tables.emails).createMany(emails);

      // Assert
      expect(counted.batchSizes).toEqual([25, 25, 11]);
      expect(
        await readBack(
          db(),
          db().tables.emails,
          emails.map((e) => e.id),
        ),
      ).toEqual(emails);
    } finally {
      counted.destroy();
    }
  });

  it('writes exactly 25 and 26 emails in one and two requests', async () => {
    // Arrange
    const twentyFive = Array.from({ length: 25 }, (_, i) => newEmail(i));
    const twentySix = Array.from({ length: 26 }, (_, i) => newEmail(100 + i));
    const counted = instrumentedClient(db().endpoint);

    try {
      // Act
      const repository = new DynamoEmailRepository(counted.doc, db().tables.emails);
      await repository.createMany(twentyFive);
      const afterFirst = [...counted.batchSizes];
      await repository.createMany(twentySix);

      // Assert
      expect(afterFirst).toEqual([25]);
      expect(counted.batchSizes).toEqual([25, 25, 1]);
      const all = [...twentyFive, ...twentySix];
      expect(
        await readBack(
          db(),
          db().tables.emails,
          all.map((e) => e.id),
        ),
      ).toEqual(all);
    } finally {
      counted.destroy();
    }
  });

  it('sends nothing for an empty list', async () => {
    // Arrange
    const counted = instrumentedClient(db().endpoint);

    try {
      // Act
      await new DynamoEmailRepository(counted.doc, db().tables.emails).createMany([]);

      // Assert
      expect(counted.batchSizes).toEqual([]);
    } finally {
      counted.destroy();
    }
  });

  it('retries the items DynamoDB leaves unprocessed until all are written', async () => {
    // Arrange: the first request of 25 comes back with 7 unprocessed.
    const emails = Array.from({ length: 30 }, (_, i) => newEmail(i));
    const throttled = instrumentedClient(db().endpoint, 7);

    try {
      // Act
      await new DynamoEmailRepository(throttled.doc, db().tables.emails).createMany(emails);

      // Assert
      expect(throttled.batchSizes).toEqual([25, 7, 5]);
      expect(
        await readBack(
          db(),
          db().tables.emails,
          emails.map((e) => e.id),
        ),
      ).toEqual(emails);
    } finally {
      throttled.destroy();
    }
  });
  it('get() returns a stored email exactly, and null for an unknown id', async () => {
    // Arrange
    const email = newEmail(7, { text: 'plain', bcc: ['audit@acme.example'] });
    await repo.createMany([email]);

    // Act / Assert: every field given comes back (the reader may add defaults for fields it did not get).
    expect(await repo.get(email.id)).toMatchObject(email);
    expect(await repo.get('em_unknown')).toBeNull();
  });

  it('keeps headers named like Object.prototype members as plain data, in order, with no prototype', async () => {
    // Arrange: JSON.parse gives "__proto__" as an own key, as a request body does.
    const headers = JSON.parse('{"__proto__":"a","constructor":"b","toString":"c","hasOwnProperty":"d","X-A":"e"}');
    const email = newEmail(7, { headers });

    // Act
    await repo.createMany([email]);
    const stored = await repo.get(email.id);

    // Assert
    expect(Object.getPrototypeOf(stored?.headers)).toBeNull();
    expect(Object.entries(stored?.headers ?? {})).toEqual(Object.entries(headers));
  });

  it('reads an email stored before headers were pairs (headers as a map)', async () => {
    // Arrange
    const email = newEmail(8);
    await db().doc.send(new PutCommand({ TableName: db().tables.emails, Item: { ...email } }));

    // Act / Assert
    expect(Object.entries((await repo.get(email.id))?.headers ?? {})).toEqual([['X-Entity-Ref-ID', 'ref-8']]);
  });

  it('keeps a waiting email in byScheduleShard as keys only, however large, spread over several key values', async () => {
    // Arrange: 24 emails sent now (recipients to settle), one with a 100 KB body.
    const emails = Array.from({ length: 24 }, (_, i) =>
      newEmail(300 + i, i === 0 ? { html: 'x'.repeat(100_000) } : {}),
    );

    // Act
    await repo.createMany(emails);

    // Assert
    const stored = await Promise.all(
      emails.map(
        async (email) =>
          (await db().doc.send(new GetCommand({ TableName: db().tables.emails, Key: { id: email.id } }))).Item,
      ),
    );
    const shards = new Set(stored.map((item) => item?.scheduleShard));
    expect([...shards].every((shard) => /^scheduled#\d+$/.test(String(shard)))).toBe(true);
    expect(shards.size).toBeGreaterThan(1);
    const { Items } = await db().doc.send(
      new QueryCommand({
        TableName: db().tables.emails,
        IndexName: 'byScheduleShard',
        KeyConditionExpression: 'scheduleShard = :s',
        FilterExpression: 'id = :id',
        ExpressionAttributeValues: { ':s': stored[0]?.scheduleShard, ':id': emails[0]?.id },
      }),
    );
    expect(Items).toEqual([{ id: emails[0]?.id, scheduleShard: stored[0]?.scheduleShard, sendAt: stored[0]?.sendAt }]);
  });

  it('lists a waiting email stored before the shards (scheduleShard "scheduled")', async () => {
    // Arrange
    const tables = await db().freshTables();
    const fresh = new DynamoEmailRepository(db().doc, tables.emails);
    const email = newEmail(9);
    await db().doc.send(
      new PutCommand({
        TableName: tables.emails,
        Item: {
          ...email,
          headers: [],
          scheduleShard: 'scheduled',
          sendAt: String(Date.parse(email.createdAt)).padStart(15, '0'),
        },
      }),
    );

    // Act / Assert
    expect(await fresh.listScheduled(Date.parse(email.createdAt), 10)).toEqual([
      { id: email.id, sendAt: Date.parse(email.createdAt) },
    ]);
  });

  it("lists a tenant from byTenant: the other mode's emails are never read, only as many entries as the page needs, no bodies", async () => {
    // Arrange: 3 test-mode emails, then 200 newer live-mode ones of the same account (an index keyed by account
    // alone would read through them all).
    const tables = await db().freshTables();
    const commands: { name: string; input: Record<string, unknown>; output: Record<string, unknown> }[] = [];
    const client = localDynamoClient(db().endpoint);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        commands.push({
          name: context.commandName ?? '',
          input: args.input as Record<string, unknown>,
          output: result.output as unknown as Record<string, unknown>,
        });
        return result;
      },
      { step: 'initialize', name: 'recordCommands' },
    );
    const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    const listing = new DynamoEmailRepository(doc, tables.emails);
    const stamp = (i: number) => `em_${String(i).padStart(4, '0')}_${randomBytes(4).toString('hex')}`;
    const testMode = [0, 1, 2].map((i) => newEmail(i, { id: stamp(i), html: 'x'.repeat(50_000) }));
    const live = Array.from({ length: 200 }, (_, i) => newEmail(10 + i, { id: stamp(10 + i), mode: 'live' }));
    await new DynamoEmailRepository(db().doc, tables.emails).createMany([...testMode, ...live]);

    // Act
    const page = await listing.list({ accountId: 'acct_contract', mode: 'test' }, { limit: 2 });
    client.destroy();

    // Assert
    expect(page.items.map((email) => email.id)).toEqual([testMode[2]?.id, testMode[1]?.id]);
    expect(page.hasMore).toBe(true);
    const queries = commands.filter((c) => c.name.startsWith('Query'));
    expect(queries.map((q) => q.input.IndexName)).toEqual(['byTenant']);
    expect(queries.reduce((sum, q) => sum + Number(q.output.ScannedCount), 0)).toBeLessThanOrEqual(3);
    expect(Number(queries[0]?.input.Limit)).toBeLessThanOrEqual(3);
    const gets = commands.filter((c) => c.name.startsWith('BatchGet'));
    expect(gets.length).toBeGreaterThan(0);
    for (const get of gets) {
      const request = Object.values(get.input.RequestItems as Record<string, Record<string, unknown>>)[0] ?? {};
      const names = Object.values((request.ExpressionAttributeNames ?? {}) as Record<string, string>);
      expect(request.ProjectionExpression).toBeDefined();
      expect(names).not.toContain('html');
      expect(names).not.toContain('text');
      expect(names).not.toContain('headers');
    }
  });
}
