// Contract suite for DynamoEmailRepository (EmailRepository port), written once against a DynamoDB endpoint
// factory (dynamodb-repositories.test.ts runs it on dynalite and DynamoDB Local): createMany writes every email
// exactly as given, in BatchWrite chunks of at most 25, retrying what DynamoDB leaves unprocessed; get reads one
// back (the event history lives in its own table: email-history.ts).
import { randomBytes } from 'node:crypto';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { beforeEach, expect, it } from 'vitest';
import { itemBytes } from '../../../bench/dynamo-capacity';
import { DynamoEmailBodyStore } from '../../../lambdas/adapters/dynamodb/email-bodies';
import { DynamoEmailHistory } from '../../../lambdas/adapters/dynamodb/email-history';
import { DynamoEmailRepository, splitEmailItems } from '../../../lambdas/adapters/dynamodb/emails';
import { TENANT_SHARDS, tenantKeys, tenantShardKey } from '../../../lambdas/adapters/dynamodb/tenant-index';
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

/** The email items as stored (metadata only: body, links and states live in emailParts). */
async function rawItems(db: DynamoTables, ids: readonly string[]): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for (const id of ids) {
    const { Item } = await db.doc.send(new GetCommand({ TableName: db.tables.emails, Key: { id } }));
    if (Item) items.push(Item);
  }
  return items;
}

/** Reads emails back through the repository, in the order asked, each whole (body, links, states). */
async function readBack(repo: DynamoEmailRepository, ids: readonly string[]): Promise<unknown[]> {
  return Promise.all(ids.map((id) => repo.get(id)));
}

/** The repository over the shared tables, or a fresh emails table. */
const tablesOf = (db: DynamoTables, emails = db.tables.emails) => ({ emails, emailParts: db.tables.emailParts });

/**
 * A document client that counts BatchWrite requests to one table and their sizes, optionally leaving some
 * unprocessed.
 */
function instrumentedClient(endpoint: string, onlyTable: string, unprocessedOnFirstCall = 0) {
  const batchSizes: number[] = [];
  const client = localDynamoClient(endpoint);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!['BatchWriteCommand', 'BatchWriteItemCommand'].includes(context.commandName ?? '')) return next(args);
      const input = args.input as { RequestItems: Record<string, unknown[]> };
      const [table, requests] = Object.entries(input.RequestItems)[0] as [string, unknown[]];
      if (table !== onlyTable) return next(args);
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
    repo = new DynamoEmailRepository(db().doc, tablesOf(db()));
  });

  it('stores one email exactly as given', async () => {
    // Arrange
    const email = newEmail(1, { text: 'Hello 1', replyTo: ['support@acme.example'] });

    // Act
    await repo.createMany([email]);

    // Assert
    expect(await readBack(repo, [email.id])).toEqual([email]);
    // The email item holds its metadata (and, small, its links); the body was written apart, once.
    const [item] = await rawItems(db(), [email.id]);
    for (const name of ['html', 'text', 'headers', 'recipientStates']) expect(item).not.toHaveProperty(name);
  });

  it("keeps an email's links in its item while the item stays within one write unit, else in the links part, and reads both alike", async () => {
    // Arrange: one recipient (a link of about 250 bytes), and 10 recipients whose links would pass 1 KB.
    const token = 't'.repeat(200);
    const one = newEmail(45, { unsubscribeUrls: { 'user45@example.com': `https://api.sendflow.test/v1/u/${token}` } });
    const to = Array.from({ length: 10 }, (_, i) => `reader${i}@example.com`);
    const ten = newEmail(46, {
      to,
      unsubscribeUrls: Object.fromEntries(to.map((r) => [r, `https://api.sendflow.test/v1/u/${token}`])),
    });

    // Act
    await repo.createMany([one, ten]);

    // Assert
    const [oneItem, tenItem] = await rawItems(db(), [one.id, ten.id]);
    expect(oneItem?.unsubscribeUrls).toEqual(one.unsubscribeUrls);
    expect(itemBytes(oneItem ?? {})).toBeLessThanOrEqual(1024);
    expect(await partItem(one.id, 'links')).toBeUndefined();
    expect(tenItem).not.toHaveProperty('unsubscribeUrls');
    expect((await partItem(ten.id, 'links'))?.unsubscribeUrls).toEqual(ten.unsubscribeUrls);
    expect(await readBack(repo, [one.id, ten.id])).toEqual([one, ten]);
    const listed = await repo.listedByIds({ accountId: 'acct_contract', mode: 'test' }, [one.id, ten.id]);
    expect(listed.map((email) => email.unsubscribeUrls)).toEqual([one.unsubscribeUrls, ten.unsubscribeUrls]);
  });

  it('stores more than 25 emails (61: chunks of 25, 25, 11), each exactly as given', async () => {
    // Arrange
    const emails = Array.from({ length: 61 }, (_, i) => newEmail(i));
    const counted = instrumentedClient(db().endpoint, db().tables.emails);

    try {
      // Act
      await new DynamoEmailRepository(counted.doc, tablesOf(db())).createMany(emails);

      // Assert
      expect(counted.batchSizes).toEqual([25, 25, 11]);
      expect(
        await readBack(
          repo,
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
    const counted = instrumentedClient(db().endpoint, db().tables.emails);

    try {
      // Act
      const repository = new DynamoEmailRepository(counted.doc, tablesOf(db()));
      await repository.createMany(twentyFive);
      const afterFirst = [...counted.batchSizes];
      await repository.createMany(twentySix);

      // Assert
      expect(afterFirst).toEqual([25]);
      expect(counted.batchSizes).toEqual([25, 25, 1]);
      const all = [...twentyFive, ...twentySix];
      expect(
        await readBack(
          repo,
          all.map((e) => e.id),
        ),
      ).toEqual(all);
    } finally {
      counted.destroy();
    }
  });

  it('sends nothing for an empty list', async () => {
    // Arrange
    const counted = instrumentedClient(db().endpoint, db().tables.emails);

    try {
      // Act
      await new DynamoEmailRepository(counted.doc, tablesOf(db())).createMany([]);

      // Assert
      expect(counted.batchSizes).toEqual([]);
    } finally {
      counted.destroy();
    }
  });

  it('retries the items DynamoDB leaves unprocessed until all are written', async () => {
    // Arrange: the first request of 25 comes back with 7 unprocessed.
    const emails = Array.from({ length: 30 }, (_, i) => newEmail(i));
    const throttled = instrumentedClient(db().endpoint, db().tables.emails, 7);

    try {
      // Act
      await new DynamoEmailRepository(throttled.doc, tablesOf(db())).createMany(emails);

      // Assert
      expect(throttled.batchSizes).toEqual([25, 7, 5]);
      expect(
        await readBack(
          repo,
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
    const fresh = new DynamoEmailRepository(db().doc, tablesOf(db(), tables.emails));
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
    const listing = new DynamoEmailRepository(doc, tablesOf(db(), tables.emails));
    const stamp = (i: number) => `em_${String(i).padStart(4, '0')}_${randomBytes(4).toString('hex')}`;
    const testMode = [0, 1, 2].map((i) => newEmail(i, { id: stamp(i), html: 'x'.repeat(50_000) }));
    const live = Array.from({ length: 200 }, (_, i) => newEmail(10 + i, { id: stamp(10 + i), mode: 'live' }));
    await new DynamoEmailRepository(db().doc, tablesOf(db(), tables.emails)).createMany([...testMode, ...live]);

    // Act
    const page = await listing.list({ accountId: 'acct_contract', mode: 'test' }, { limit: 2 });
    client.destroy();

    // Assert
    expect(page.items.map((email) => email.id)).toEqual([testMode[2]?.id, testMode[1]?.id]);
    expect(page.hasMore).toBe(true);
    // Index reads of the emails table: byTenant only. The page's links and states come from emailParts, never a body.
    const queries = commands.filter((c) => c.name.startsWith('Query') && c.input.TableName === tables.emails);
    const partReads = commands.filter((c) => c.input.TableName === db().tables.emailParts);
    expect(partReads.length).toBeGreaterThan(0);
    for (const read of partReads) expect(JSON.stringify(read.output)).not.toContain('xxxxxxxxxx');
    // byTenant only, every key of the tenant (its shards and the unsharded key) read, each page small (its share of
    // the page and the entry that says whether more follow): the 3 entries the tenant has, never the live ones.
    expect(new Set(queries.map((q) => q.input.IndexName))).toEqual(new Set(['byTenant']));
    expect(queries.length).toBeGreaterThanOrEqual(TENANT_SHARDS + 1);
    expect(new Set(queries.map((q) => (q.input.ExpressionAttributeValues as Record<string, string>)[':t']))).toEqual(
      new Set(tenantKeys({ accountId: 'acct_contract', mode: 'test' })),
    );
    expect(queries.reduce((sum, q) => sum + Number(q.output.ScannedCount), 0)).toBeLessThanOrEqual(3);
    for (const query of queries) expect(Number(query.input.Limit)).toBeLessThanOrEqual(4);
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

  it("spreads a tenant's emails over its byTenant keys and lists them merged newest first, emails indexed before the shards included, with a stable cursor", async () => {
    // Arrange: 40 emails through the repository (sharded keys), and 3 as the code before the shards indexed them.
    const tables = await db().freshTables();
    const repository = new DynamoEmailRepository(db().doc, tablesOf(db(), tables.emails));
    const stamp = (i: number) => `em_${String(i).padStart(4, '0')}_${randomBytes(4).toString('hex')}`;
    const emails = Array.from({ length: 40 }, (_, i) => newEmail(i, { id: stamp(i) }));
    await repository.createMany(emails.filter((_, i) => i % 10 !== 5));
    const legacy = emails.filter((_, i) => i % 10 === 5);
    await repository.createMany(legacy);
    for (const email of legacy) {
      await db().doc.send(
        new UpdateCommand({
          TableName: tables.emails,
          Key: { id: email.id },
          UpdateExpression: 'SET tenant = :t',
          ExpressionAttributeValues: { ':t': `${email.accountId}#${email.mode}` },
        }),
      );
    }
    const tenant = { accountId: 'acct_contract', mode: 'test' } as const;

    // Act: pages of 7, each resuming after the last id of the one before.
    const listed: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const { items, hasMore } = await repository.list(tenant, { limit: 7, ...(after ? { after } : {}) });
      listed.push(...items.map((email) => email.id));
      after = items.at(-1)?.id;
      if (!hasMore) break;
    }
    const { Items = [] } = await db().doc.send(new ScanCommand({ TableName: tables.emails }));

    // Assert
    expect(listed).toEqual(emails.map((email) => email.id).reverse());
    const keys = new Set(Items.filter((item) => !legacy.some((e) => e.id === item.id)).map((item) => item.tenant));
    expect(keys).toEqual(new Set(tenantKeys(tenant).slice(1)));
    for (const item of Items) {
      if (!legacy.some((e) => e.id === item.id)) expect(item.tenant).toBe(tenantShardKey(tenant, String(item.id)));
    }
  });

  // --- the data model, priced by AWS's rules -----------------------------------------------------------------

  /** A client that records every write (table and key) made through it. */
  function recordingClient() {
    const writes: { op: string; table: string; key: unknown }[] = [];
    const client = localDynamoClient(db().endpoint);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const op = String(context.commandName).replace(/Command$/, '');
        const input = args.input as Record<string, unknown>;
        if (['PutItem', 'UpdateItem', 'DeleteItem'].includes(op))
          writes.push({ op, table: String(input.TableName), key: input.Key ?? input.Item });
        if (op === 'BatchWriteItem')
          for (const [table, requests] of Object.entries(input.RequestItems as Record<string, unknown[]>))
            for (const request of requests)
              writes.push({ op, table, key: (request as { PutRequest: unknown }).PutRequest });
        return next(args);
      },
      { step: 'initialize', name: 'recordWrites' },
    );
    const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    return { doc, writes, destroy: () => client.destroy() };
  }

  it('get() with metadataOnly reads the email item only: one GetItem, no body and no parts', async () => {
    // Arrange: a body store that counts its reads, and a client that records every command.
    const commands: string[] = [];
    const client = localDynamoClient(db().endpoint);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        commands.push(`${context.commandName} ${String((args.input as { TableName?: string }).TableName)}`);
        return next(args);
      },
      { step: 'initialize', name: 'recordReads' },
    );
    const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    let bodyReads = 0;
    const bodies = new DynamoEmailBodyStore(db().doc, db().tables.emailParts);
    const counted = {
      putMany: bodies.putMany.bind(bodies),
      get: (id: string) => {
        bodyReads += 1;
        return bodies.get(id);
      },
    };
    const email = newEmail(44, { html: '<p>Hello</p>' });
    await new DynamoEmailRepository(db().doc, tablesOf(db()), { bodies: counted }).createMany([email]);

    // Act
    const meta = await new DynamoEmailRepository(doc, tablesOf(db()), { bodies: counted }).get(email.id, {
      metadataOnly: true,
    });
    client.destroy();

    // Assert
    expect(meta?.subject).toBe(email.subject);
    expect(meta).not.toHaveProperty('html');
    expect(commands).toEqual([`GetItemCommand ${db().tables.emails}`]);
    expect(bodyReads).toBe(0);
  });

  it("list() with parts: false reads the emails' items only, never their parts: a status filter's scan reads those of its matches alone", async () => {
    // Arrange: a client that records every command; three of the tenant's emails, with links.
    const commands: string[] = [];
    const client = localDynamoClient(db().endpoint);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        commands.push(`${context.commandName} ${String((args.input as { TableName?: string }).TableName)}`);
        return next(args);
      },
      { step: 'initialize', name: 'recordListReads' },
    );
    const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    const tenant = { accountId: `acct_${randomBytes(4).toString('hex')}`, mode: 'test' } as const;
    const emails = [0, 1, 2].map((i) => newEmail(i, { accountId: tenant.accountId }));
    await repo.createMany(emails);

    // Act
    const bare = await new DynamoEmailRepository(doc, tablesOf(db())).list(tenant, { limit: 10, parts: false });
    const bareReads = commands.splice(0);
    const whole = await new DynamoEmailRepository(doc, tablesOf(db())).list(tenant, { limit: 10 });
    client.destroy();

    // Assert: the same emails, newest first; without parts, not one read of emailParts (with them, one each).
    expect(bare.items.map((email) => email.id)).toEqual(whole.items.map((email) => email.id));
    expect(bare.items).toHaveLength(3);
    expect(bareReads.filter((command) => command.includes(db().tables.emailParts))).toEqual([]);
    expect(whole.items.every((email) => Object.keys(email.unsubscribeUrls).length === 1)).toBe(true);
    expect(commands.filter((command) => command.includes(db().tables.emailParts))).toHaveLength(3);
  });

  const partItem = async (emailId: string, part: string) =>
    (await db().doc.send(new GetCommand({ TableName: db().tables.emailParts, Key: { emailId, part } }))).Item;

  it('sending writes the body once, at accept: a change of one recipient writes its own item of well under 1 KB, the email item stays small', async () => {
    // Arrange: a 30 KB email to 10 recipients, each with its unsubscribe link; random text, so it stays 30 KB
    // compressed (bodies are stored gzip-compressed; base64 of random bytes shrinks by a quarter only).
    const to = Array.from({ length: 10 }, (_, i) => `reader${i}@example.com`);
    const email = newEmail(40, {
      to,
      html: `<p>${randomBytes(31 * 1024).toString('base64')}</p>`,
      unsubscribeUrls: Object.fromEntries(
        to.map((r) => [r, `https://api.sendflow.test/v1/unsubscribe/${'t'.repeat(180)}`]),
      ),
    });
    const recorded = recordingClient();
    const sending = new DynamoEmailRepository(recorded.doc, tablesOf(db()));

    try {
      // Act: what the send worker does, recipient by recipient: claim, then settle.
      await sending.createMany([email]);
      const accepted = recorded.writes.length;
      await sending.startSending(email.id, '2025-04-01T10:00:01.000Z');
      for (const i of to.keys()) {
        const claim = { state: 'claimed', tries: 1, until: Date.now() + 60_000 } as const;
        expect(await sending.setRecipient(email.id, i, { state: 'pending' }, claim, [])).not.toBeNull();
        expect(
          await sending.setRecipient(email.id, i, { state: 'claimed', tries: 1 }, { state: 'sent', tries: 1 }, []),
        ).not.toBeNull();
      }
      await sending.finishSending(email.id);

      // Assert: after accept, the email item is written twice (start, finish), the body never, each recipient's
      // item twice (claim, settle).
      const later = recorded.writes.slice(accepted);
      expect(later.filter((w) => w.table === db().tables.emails)).toHaveLength(2);
      expect(later.filter((w) => w.table === db().tables.emailParts)).toHaveLength(20);
      expect(later.every((w) => JSON.stringify(w.key).includes('"part":"body"') === false)).toBe(true);
      const [item] = await rawItems(db(), [email.id]);
      expect(itemBytes(item ?? {})).toBeLessThan(1024);
      for (const i of to.keys()) {
        const recipient = await partItem(email.id, `r#${String(i).padStart(3, '0')}`);
        expect(recipient?.recipientState).toEqual({ state: 'sent', tries: 1 });
        expect(itemBytes(recipient ?? {})).toBeLessThan(256);
      }
      expect(itemBytes((await partItem(email.id, 'body')) ?? {})).toBeGreaterThan(30 * 1024);
      expect((await sending.get(email.id))?.html).toBe(email.html);
    } finally {
      recorded.destroy();
    }
  });

  it('every item of an email carries its expiresAt (the retention after accept, or after its schedule); once past, reads skip it', async () => {
    // Arrange
    const now = Date.UTC(2026, 10, 1);
    const day = 86_400;
    const kept = new DynamoEmailRepository(db().doc, tablesOf(db()), { retentionSeconds: 7 * day, now: () => now });
    const email = newEmail(41);
    const scheduled = newEmail(42, { scheduledAt: new Date(now + 3 * day * 1000).toISOString() });
    const history = new DynamoEmailHistory(db().doc, db().tables.emailEvents, {
      retentionSeconds: 7 * day,
      now: () => now,
    });
    await kept.createMany([email, scheduled]);
    await kept.startSending(email.id, new Date(now).toISOString());
    await kept.setRecipient(email.id, 0, { state: 'pending' }, { state: 'sent', tries: 1 }, []);
    await history.record(email.id, { id: 'evt_41', type: 'email.sent', timestamp: new Date(now).toISOString() });
    const expiresAt = now / 1000 + 7 * day;

    // Act
    const later = (ms: number) =>
      new DynamoEmailRepository(db().doc, tablesOf(db()), { retentionSeconds: 7 * day, now: () => ms });
    const weekAfter = later(now + 7 * day * 1000);
    const laterHistory = new DynamoEmailHistory(db().doc, db().tables.emailEvents, {
      now: () => now + 7 * day * 1000,
    });

    // Assert
    expect((await rawItems(db(), [email.id]))[0]?.expiresAt).toBe(expiresAt);
    expect((await rawItems(db(), [scheduled.id]))[0]?.expiresAt).toBe(expiresAt + 3 * day);
    for (const part of ['body', 'r#000']) expect((await partItem(email.id, part))?.expiresAt).toBe(expiresAt);
    expect(await later(now + 7 * day * 1000 - 1000).get(email.id)).not.toBeNull();
    expect(await weekAfter.get(email.id)).toBeNull();
    expect(await weekAfter.recipientStates(email.id)).toBeNull();
    expect(await weekAfter.get(scheduled.id)).not.toBeNull();
    expect(
      (await weekAfter.list({ accountId: email.accountId, mode: email.mode }, { limit: 100 })).items.map((e) => e.id),
    ).not.toContain(email.id);
    expect((await laterHistory.latest(email.id, 10)).events).toEqual([]);
  });

  it('reads an email as written before the parts (body, links and states in its item), and upgrade-emails moves them once', async () => {
    // Arrange: items exactly as the code before the parts wrote them, mid-send: recipient 0 sent, 1 claimed by a
    // worker that died, 2 pending; and a history row without expiresAt.
    const tables = await db().freshTables();
    const own = { emails: tables.emails, emailParts: tables.emailParts };
    const repository = new DynamoEmailRepository(db().doc, own);
    const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
    const email = newEmail(43, { to: ['a@example.com', 'b@example.com', 'c@example.com'], text: 'plain', createdAt });
    const states = {
      '0': { state: 'sent', tries: 1 },
      '1': { state: 'claimed', tries: 1, until: Date.now() - 1, epoch: 0 },
    };
    await db().doc.send(
      new PutCommand({
        TableName: tables.emails,
        Item: {
          ...email,
          headers: Object.entries(email.headers),
          tenant: `${email.accountId}#${email.mode}`,
          sentAt: createdAt,
          recipientStates: states,
          scheduleShard: 'scheduled#1',
          sendAt: String(Date.parse(email.createdAt)).padStart(15, '0'),
        },
      }),
    );
    await db().doc.send(
      new PutCommand({
        TableName: tables.emailEvents,
        Item: { emailId: email.id, eventId: 'evt_old', at: 'x', type: 'email.sent', timestamp: email.createdAt },
      }),
    );
    const before = await repository.get(email.id);

    // Act
    const first = await splitEmailItems(db().doc, tables, { retentionSeconds: 30 * 86_400 });
    const again = await splitEmailItems(db().doc, tables, { retentionSeconds: 30 * 86_400 });

    // Assert: read the same before and after; moved once; the item keeps metadata only.
    expect(before).toEqual({ ...email, sentAt: createdAt, recipientStates: states });
    expect(first).toEqual({ emails: 1, events: 1 });
    expect(again).toEqual({ emails: 0, events: 0 });
    expect(await repository.get(email.id)).toEqual(before);
    const [item] = await rawItems({ ...db(), tables: { ...db().tables, ...own } }, [email.id]);
    for (const name of ['html', 'text', 'headers', 'unsubscribeUrls', 'recipientStates'])
      expect(item).not.toHaveProperty(name);
    expect(item?.expiresAt).toBe(Date.parse(email.createdAt) / 1000 + 30 * 86_400);
    // The claim its worker left lapses into send_outcome_unknown as before; the pending one is claimed.
    const lapsed = await repository.setRecipient(
      email.id,
      1,
      { state: 'lapsed', now: Date.now() },
      { state: 'failed', tries: 1, reason: 'send_outcome_unknown' },
      [],
    );
    const claimed = await repository.setRecipient(
      email.id,
      2,
      { state: 'pending' },
      { state: 'claimed', tries: 1, until: Date.now() + 60_000 },
      [],
    );
    expect([lapsed, claimed].every((r) => r !== null)).toBe(true);
    expect(await repository.recipientStates(email.id)).toEqual({
      '0': { state: 'sent', tries: 1 },
      '1': { state: 'failed', tries: 1, reason: 'send_outcome_unknown' },
      '2': { state: 'claimed', tries: 1, until: expect.any(Number) },
    });
  });
}
