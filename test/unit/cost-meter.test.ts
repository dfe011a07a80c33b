// Keeps bench:cost honest: AWS's billing rules recomputed by hand on items of known sizes, and the meter's
// recording path (dynalite's thread write log, the reads middleware) checked against those hand counts; what Lambda
// adds to the log lines; an email event's history write and status note as the meter prices them.

import { randomBytes } from 'node:crypto';
import { DeleteItemCommand, type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accessLogLineBytes,
  bill,
  CONTEXT_KEYS_BYTES,
  logsIngested,
  TEXT_PLATFORM_LINES_BYTES,
} from '../../bench/cost/bill';
import {
  gbSeconds,
  type IndexShape,
  indexEntry,
  indexWrites,
  itemBytes,
  numberBytes,
  readUnits,
  sqsRequests,
  type WireItem,
  writeUnits,
} from '../../bench/cost/billing';
import { type Deployment, type FunctionConfig, readDeployment } from '../../bench/cost/deployment';
import { createMeter, type Usage, WRITE_LOG } from '../../bench/cost/meter';
import {
  cachedReadKeys,
  combine,
  isItemKey,
  normalize,
  scaleKeys,
  withoutCachedReads,
} from '../../bench/cost/partitions';
import { PRICES } from '../../bench/cost/prices';
import { S3EmailBodyStore } from '../../lambdas/adapters/aws/s3-email-bodies';
import { API_REQUEST_SHARDS } from '../../lambdas/adapters/dynamodb/api-requests';
import { DELIVERY_SHARDS } from '../../lambdas/adapters/dynamodb/deliveries';
import { STATUS_SHARDS } from '../../lambdas/adapters/dynamodb/email-history';
import { SCHEDULE_SHARDS } from '../../lambdas/adapters/dynamodb/emails';
import { SUPPRESSION_SHARDS } from '../../lambdas/adapters/dynamodb/suppressions';
import { TENANT_SHARDS } from '../../lambdas/adapters/dynamodb/tenant-index';
import { encodeBody } from '../../lambdas/adapters/email-body-object';
import { timeOrderedId } from '../../lambdas/domain/ids';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { type LocalRuntime, startLocalRuntime } from '../../lambdas/runtime/local/runtime';

describe('DynamoDB item size and request units', () => {
  it('counts attribute names and values as the Developer Guide says', () => {
    // id: 2 + 3; n: 1 + (3 digits → 2) + 1; ok: 2 + 1; tags: 4 + 3 + (1 + 1) + (1 + 2); m: 1 + 3 + (1 + 1) + 1
    const item: WireItem = {
      id: { S: 'abc' },
      n: { N: '123' },
      ok: { BOOL: true },
      tags: { L: [{ S: 'a' }, { S: 'bc' }] },
      m: { M: { k: { S: 'v' } } },
    };
    expect(itemBytes(item)).toBe(5 + 4 + 3 + 12 + 7);
    expect(itemBytes({ é: { S: 'ü' } })).toBe(4); // UTF-8 bytes, not characters
    expect(numberBytes('1000')).toBe(2); // trailing zeros are not significant
    expect(numberBytes('-12.345')).toBe(4);
  });

  it('bills writes per started KB and reads per started 4 KB, eventual consistency at half', () => {
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1024)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
    expect(writeUnits(30 * 1024 + 1)).toBe(31);
    expect(readUnits(100, false)).toBe(0.5);
    expect(readUnits(4096, true)).toBe(1);
    expect(readUnits(4097, true)).toBe(2);
    expect(readUnits(4097, false)).toBe(1);
  });

  const byDue: IndexShape = {
    name: 'byDueShard',
    keys: ['dueShard', 'dueAt'],
    tableKeys: ['webhookId', 'id'],
    projection: { type: 'INCLUDE', attributes: ['attempts'] },
  };
  const pending: WireItem = {
    webhookId: { S: 'wh_1' },
    id: { S: 'dlv_1' },
    dueShard: { S: 'due#3' },
    dueAt: { S: '000000000000001' },
    attempts: { N: '0' },
    payload: { S: 'x'.repeat(3000) },
  };
  const { dueShard: _s, dueAt: _a, ...succeeded } = pending;

  it('bills a GSI write by the projected entry, not the item', () => {
    const entry = indexEntry(pending, byDue) as WireItem;
    // webhookId 9 + 4, id 2 + 5, dueShard 8 + 5, dueAt 5 + 15, attempts 8 + 2 (the payload is not projected)
    expect(itemBytes(entry)).toBe(13 + 7 + 13 + 20 + 10);
    expect(indexWrites(undefined, pending, byDue)).toEqual([{ kind: 'put', partition: 'due#3', units: 1 }]);
    // The table write of the same item: 3,000 bytes of payload make it 3 units.
    expect(writeUnits(itemBytes(pending))).toBe(3);
  });

  it('bills an entry leaving the index, a changed key as delete and put, and nothing for unprojected changes', () => {
    expect(indexWrites(pending, succeeded, byDue)).toEqual([{ kind: 'delete', partition: 'due#3', units: 1 }]);
    const moved = { ...pending, dueShard: { S: 'due#4' } };
    expect(indexWrites(pending, moved, byDue).map((w) => `${w.kind} ${w.partition}`)).toEqual([
      'delete due#3',
      'put due#4',
    ]);
    expect(indexWrites(pending, { ...pending, payload: { S: 'other' } }, byDue)).toEqual([]);
    expect(indexWrites(pending, { ...pending, attempts: { N: '1' } }, byDue)).toEqual([
      { kind: 'update', partition: 'due#3', units: 1 },
    ]);
  });
});

describe('SQS and Lambda', () => {
  it('bills an SQS request per started 64 KB chunk', () => {
    expect(sqsRequests(600)).toBe(1);
    expect(sqsRequests(64 * 1024)).toBe(1);
    expect(sqsRequests(64 * 1024 + 1)).toBe(2);
    expect(sqsRequests(256 * 1024)).toBe(4);
  });

  it('bills Lambda by the millisecond at the configured memory', () => {
    expect(gbSeconds(1024, 120)).toBeCloseTo(0.12, 10);
    expect(gbSeconds(1024, 119.2)).toBeCloseTo(0.12, 10); // rounded up to the millisecond
    expect(gbSeconds(1024, 120) * PRICES.lambda.gbSecond.arm64).toBeCloseTo(0.0000016, 9);
    expect(gbSeconds(512, 1000)).toBe(0.5);
  });
});

describe('CloudWatch Logs', () => {
  const fn = (logging: FunctionConfig['logging']): FunctionConfig => ({
    service: 'sendflow-delivery',
    memoryMb: 512,
    architecture: 'arm64',
    logging,
  });
  const deployment = (logging: FunctionConfig['logging']) =>
    ({ functions: new Map([['sendflow-delivery', fn(logging)]]) }) as unknown as Deployment;
  /** Two invocations; an INFO line of 300 bytes, a DEBUG line of 200 and an EMF line of 500 (no level). */
  const usage = {
    invocations: [
      { fn: 'sendflow-delivery', records: 10, ms: 20 },
      { fn: 'sendflow-delivery', records: 10, ms: 20 },
    ],
    logs: [
      { fn: 'sendflow-delivery', bytes: 300, emf: false, level: 'INFO' },
      { fn: 'sendflow-delivery', bytes: 200, emf: false, level: 'DEBUG' },
      { fn: 'sendflow-delivery', bytes: 500, emf: true },
    ],
  } as unknown as Usage;

  it("reads every function's log format and levels from the synthesized template", () => {
    const { functions } = readDeployment();
    expect(functions.get('sendflow-delivery')?.logging).toEqual({
      format: 'JSON',
      applicationLevel: 'INFO',
      systemLevel: 'WARN',
    });
    expect([...functions.values()].every((f) => f.logging.systemLevel === 'WARN')).toBe(true);
  });

  it("prices one API Gateway access log line per request, from the stage's format with typical values", () => {
    // {"requestId":"<36>","status":"<3>"} + newline; an unknown variable counts 10 characters.
    expect(accessLogLineBytes('{"requestId":"$context.requestId","status":"$context.status"}')).toBe(
      '{"requestId":"","status":""}'.length + 36 + 3 + 1,
    );
    expect(accessLogLineBytes('{"x":"$context.somethingNew"}')).toBe('{"x":""}'.length + 10 + 1);
    expect(accessLogLineBytes('')).toBe(0);
    expect(readDeployment().accessLogFormat).toContain('$context.requestId');
  });

  it('adds the request id the compact formatter puts on each log line, not on EMF lines: 61 bytes', () => {
    // ,"function_request_id":"<36-character request id>" = 1 + 21 + 1 + 38
    expect(CONTEXT_KEYS_BYTES).toBe(61);
  });

  it('prices no platform line when the system level is WARN, and no line under the application level', () => {
    const ingested = logsIngested(usage, deployment({ format: 'JSON', applicationLevel: 'INFO', systemLevel: 'WARN' }));
    expect(ingested).toBe(300 + 61 + 500);
  });

  it("prices Lambda's START, END and REPORT lines per invocation in text format, and DEBUG lines at DEBUG", () => {
    const ingested = logsIngested(
      usage,
      deployment({ format: 'Text', applicationLevel: 'DEBUG', systemLevel: 'INFO' }),
    );
    expect(TEXT_PLATFORM_LINES_BYTES).toBe(265);
    expect(ingested).toBe(300 + 61 + 200 + 61 + 500 + 2 * 265);
  });
});

describe('partition simulation', () => {
  it('scales shared keys by the rate and keeps an email key at its own units', () => {
    const keys = new Map([
      ['deliveries||wh_a', { wcu: 400, rcu: 0 }],
      ['emails||email_01abc', { wcu: 782, rcu: 1 }],
      ['rateLimits||account:acct_1#1795648480', { wcu: 1, rcu: 0 }],
      ['rateLimits||account:acct_1#1795648481', { wcu: 1, rcu: 0 }],
    ]);
    const scaled = scaleKeys(keys, 200, 10_000, 1);
    const of = (where: string) => scaled.find((k) => k.where === where);
    expect(of('deliveries')?.wcu).toBe(20_000); // 2 units a delivery at 10,000 a second
    expect(of('emails')).toMatchObject({ scope: 'per-item', wcu: 782 });
    expect(of('rateLimits')).toMatchObject({ key: 'account:acct_1#<window>', wcu: 100 }); // windows merged
    expect(normalize('quota#acct_1#test#2026-11-25')).toBe('quota#acct_1#test#2026-11-25');
    expect(isItemKey('email_01m8aftsac8cmhc9r8ns1x76ag')).toBe(true);
    expect(isItemKey('acct_01m8#test')).toBe(false);
  });

  it("scales per-request tables by the tenant's requests, and a window's counter items apart", () => {
    // Arrange: 20 single-email requests, each writing one of the window's 4 counter items and the request log
    const keys = new Map([
      ['rateLimits||account:acct_1#1795648480#0', { wcu: 5, rcu: 15 }],
      ['rateLimits||account:acct_1#1795648481#0', { wcu: 5, rcu: 15 }],
      ['apiRequests||acct_1#test', { wcu: 20, rcu: 0 }],
      ['emails|byTenant|acct_1#test', { wcu: 20, rcu: 0 }],
    ]);

    // Act: 1,000 emails a second, at most 500 requests
    const scaled = scaleKeys(keys, 20, 1_000, 1, { rate: 500, inSample: 20 });
    const of = (where: string) => scaled.find((k) => k.where === where);

    // Assert
    expect(of('rateLimits')).toMatchObject({ key: 'account:acct_1#<window>#0', wcu: 250, rcu: 750 });
    expect(of('apiRequests')?.wcu).toBe(500);
    expect(of('emails byTenant')?.wcu).toBe(1_000); // per email, not per request
  });

  it("prices cached reads per container and TTL, and takes them out of the sample's scaled reads", () => {
    // Arrange: the worker read the tenant's 5 webhooks 40 times (0.5 units each); the dispatcher listed them 4 times
    const keys = new Map([['webhooks||acct_1#test', { wcu: 0, rcu: 100 + 6 }]]);
    const reads = new Map([
      [
        'sendflow-delivery|webhooks||acct_1#test',
        { rcu: 100, keyReads: 200, items: new Set(['a', 'b', 'c', 'd', 'e']) },
      ],
      ['sendflow-dispatcher|webhooks||acct_1#test', { rcu: 6, keyReads: 4, items: new Set(['(query)']) }],
    ]);
    const cached = { fn: 'sendflow-delivery', table: 'webhooks', containers: 55, ttlSeconds: 1 };

    // Act: 200 deliveries in the sample, 10,000 a second
    const keysLeft = withoutCachedReads(keys, reads, cached);
    const hot = combine([...scaleKeys(keysLeft, 200, 10_000, 1), ...cachedReadKeys(reads, cached)]);

    // Assert: the dispatcher's 6 units scale (300 RCU/s); the worker's are 55 containers × 5 items × 0.5 a second
    expect(keysLeft.get('webhooks||acct_1#test')?.rcu).toBe(6);
    expect(hot).toEqual([{ where: 'webhooks', key: 'acct_1#test', wcu: 0, rcu: 300 + 137.5, scope: 'shared' }]);
  });
});

describe('partition simulation of a sharded key', () => {
  it("spreads a webhook's delivery shards evenly at scale (a uniform hash of unique ids): its total over DELIVERY_SHARDS", () => {
    // Arrange: 40 deliveries of one webhook (2 units each) fell unevenly over a few of its shards in the sample.
    const keys = new Map([
      ['deliveries||wh_a#0', { wcu: 20, rcu: 0 }],
      ['deliveries||wh_a#5', { wcu: 42, rcu: 4 }],
      ['deliveries||wh_a#15', { wcu: 18, rcu: 0 }],
      ['deliveries||wh_a', { wcu: 0, rcu: 2 }],
    ]);

    // Act: 40 deliveries in the sample, 2,000 a second.
    const scaled = scaleKeys(keys, 40, 2_000, 1);

    // Assert: 4,000 WCU/s for the webhook in all, 250 on each of 16 shards; the legacy partition apart.
    const shards = scaled.filter((k) => k.where === 'deliveries' && k.key !== 'wh_a');
    expect(shards).toHaveLength(DELIVERY_SHARDS);
    for (const shard of shards) {
      expect(shard.key).toMatch(/^wh_a#\d+$/);
      expect(shard.wcu).toBe(4_000 / DELIVERY_SHARDS);
      expect(shard.rcu).toBe(200 / DELIVERY_SHARDS);
    }
    expect(scaled.find((k) => k.key === 'wh_a')).toMatchObject({ wcu: 0, rcu: 100 });
  });
  it('spreads every key sharded by a hash of unique ids (schedule, tenant, status, request log, suppressions) evenly at scale', () => {
    // Arrange: 20 emails of one tenant fell unevenly over the shards of each index in the sample.
    const keys = new Map([
      ['emails|byScheduleShard|scheduled#4', { wcu: 14, rcu: 0 }],
      ['emails|byScheduleShard|scheduled#1', { wcu: 6, rcu: 0 }],
      ['emails|byScheduleShard|scheduled', { wcu: 0, rcu: 3 }],
      ['emails|byTenant|acct_1#test#0', { wcu: 12, rcu: 0 }],
      ['emails|byTenant|acct_1#test#3', { wcu: 8, rcu: 0 }],
      ['emailEvents|byStatus|acct_1#test#sent#2', { wcu: 16, rcu: 0 }],
      ['emailEvents|byStatus|acct_1#test#delivered#5', { wcu: 4, rcu: 0 }],
      ['apiRequests||acct_1#test#1', { wcu: 20, rcu: 0 }],
      ['suppressions||acct_1#test#9', { wcu: 0, rcu: 20 }],
    ]);

    // Act: 20 emails in the sample, 1,000 a second.
    const scaled = scaleKeys(keys, 20, 1_000, 1);
    const on = (where: string, key: RegExp) => scaled.filter((k) => k.where === where && key.test(k.key));

    // Assert: each index's total (1 unit an email: 1,000 a second) over its shards, every shard alike; the legacy key and other statuses apart.
    const cases = [
      ['emails byScheduleShard', /^scheduled#\d+$/, SCHEDULE_SHARDS, 1_000],
      ['emails byTenant', /^acct_1#test#\d+$/, TENANT_SHARDS, 1_000],
      ['emailEvents byStatus', /^acct_1#test#sent#\d+$/, STATUS_SHARDS, 800],
      ['emailEvents byStatus', /^acct_1#test#delivered#\d+$/, STATUS_SHARDS, 200],
      ['apiRequests', /^acct_1#test#\d+$/, API_REQUEST_SHARDS, 1_000],
    ] as const;
    for (const [where, key, count, total] of cases) {
      const shards = on(where, key);
      expect(shards.map((k) => k.wcu)).toEqual(Array.from({ length: count }, () => total / count));
    }
    expect(on('suppressions', /^acct_1#test#\d+$/).map((k) => k.rcu)).toEqual(
      Array.from({ length: SUPPRESSION_SHARDS }, () => 1_000 / SUPPRESSION_SHARDS),
    );
    expect(scaled.find((k) => k.key === 'scheduled')).toMatchObject({ wcu: 0, rcu: 150 });
  });
});

describe('the meter on the embedded DynamoDB', () => {
  let runtime: LocalRuntime;
  let client: DynamoDBClient;
  const config = loadConfig({
    ...localTableDefaults('meter'),
    PORT: '0',
    SF_DATA_DIR: ':memory:',
    SF_SEED: 'false',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  const meter = createMeter(config.tables);
  const table = config.tables.deliveries;
  const item = {
    webhookId: { S: 'wh_meter' },
    id: { S: 'dlv_meter' },
    dueShard: { S: 'due#7' },
    dueAt: { S: '000000000000001' },
    attempts: { N: '0' },
    payload: { S: 'p'.repeat(2500) },
  };

  beforeAll(async () => {
    runtime = await startLocalRuntime(config, {
      dynamoPreload: WRITE_LOG,
      instrument: (c) => {
        client = c;
        meter.instrument(c);
      },
    });
    meter.attach(runtime);
  });
  afterAll(async () => {
    await runtime?.stop();
  });

  it('counts what the S3 body store asks S3: each PUT and GET (a miss too), no tag, the bytes left, priced by hand', async () => {
    // Arrange: the AWS adapter over the meter's S3, a 30-day retention; one email sent at once, one scheduled.
    const now = Date.UTC(2026, 10, 26);
    const s3 = new S3EmailBodyStore(meter.s3Client(), 'bench-bodies', {
      now: () => now,
      retentionSeconds: 30 * 86_400,
    });
    const body = { html: 'h'.repeat(10_000), headers: {} };
    const soon = now / 1000 + 30 * 86_400;
    const later = now / 1000 + 40 * 86_400;
    await meter.start();

    // Act
    await s3.putMany([
      { emailId: 'email_a', body, expiresAt: soon },
      { emailId: 'email_b', body, expiresAt: later },
    ]);
    const sent = await s3.get('email_a'); // one GET, at the retention key
    const scheduled = await s3.get('email_b'); // two: the retention key misses, the plain one finds it
    const missing = await s3.get('email_missing'); // two misses, both billed
    const usage = await meter.stop();

    // Assert
    expect([sent, scheduled, missing]).toEqual([body, body, null]);
    const bytes = Buffer.byteLength(encodeBody(body, soon)) + Buffer.byteLength(encodeBody(body, later));
    expect(usage.s3).toEqual({ put: 2, get: 5, objects: 2, tags: 0, storedBytes: bytes });
    const sample = { usage, deliveries: 0, emails: 2, recipients: 2, events: 0, apiRequests: 0, egressBytes: 0 };
    const items = bill(sample as never, { functions: new Map(), logRetentionDays: 30 } as never);
    expect(items.s3_requests).toBeCloseTo(2 * 0.005e-3 + 5 * 0.0004e-3, 12);
    expect(items.s3_storage).toBeCloseTo((bytes / 1024 ** 3) * 0.023, 15);
    expect(items.s3_tags ?? 0).toBe(0);
  });

  it('records table and index units, a failed condition, and the read, each on its partition key', async () => {
    await meter.start();
    await client.send(new PutItemCommand({ TableName: table, Item: item }));
    // The same put, refused by its condition: billed as a write of the item it was checked against.
    await expect(
      client.send(
        new PutItemCommand({ TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(id)' }),
      ),
    ).rejects.toThrow();
    await client.send(new GetItemCommand({ TableName: table, Key: { webhookId: item.webhookId, id: item.id } }));
    await client.send(new DeleteItemCommand({ TableName: table, Key: { webhookId: item.webhookId, id: item.id } }));
    const usage = await meter.stop();

    const tableUnits = writeUnits(itemBytes(item)); // 3: 2,500 bytes of payload and the rest
    expect(tableUnits).toBe(3);
    // put 3 + failed 3 + delete 3; the index: a put and a delete of a 1-unit entry
    expect(usage.dynamo.writeUnits.get('deliveries')).toBe(3 * tableUnits);
    expect(usage.dynamo.failedConditionUnits).toBe(tableUnits);
    expect(usage.dynamo.writeUnits.get('deliveries byDueShard')).toBe(2);
    expect(usage.dynamo.keys.get('deliveries||wh_meter')).toEqual({ wcu: 3 * tableUnits, rcu: 0.5 });
    expect(usage.dynamo.keys.get('deliveries|byDueShard|due#7')).toEqual({ wcu: 2, rcu: 0 });
    expect(usage.dynamo.readUnits.get('deliveries')).toBe(0.5);
    // Deleted by the end of the sample: nothing stored.
    expect(usage.dynamo.storedBytes.get('deliveries') ?? 0).toBe(0);
  });

  it("prices an email event's history write at 1 unit, and a status note that does not raise it at half a read", async () => {
    // Arrange: an event whose id is made at its own time; the email already noted delivered.
    const history = runtime.services.emailHistory;
    const tenant = { accountId: 'acct_meter', mode: 'test' } as const;
    const at = Date.UTC(2026, 10, 26, 1, 0, 0);
    await history.noteStatus(tenant, 'email_meter', { status: 'delivered', rank: 20 });
    const event = {
      id: timeOrderedId('evt', at, randomBytes),
      type: 'email.delivered',
      timestamp: new Date(at).toISOString(),
    };

    // Act
    await meter.start();
    await history.record('email_meter', event);
    await history.noteStatus(tenant, 'email_meter', { status: 'delivered', rank: 20 });
    const usage = await meter.stop();

    // Assert: one table write, no byTime entry, no write for the note, its rank read at half a unit.
    expect(Object.fromEntries(usage.dynamo.writeUnits)).toEqual({ emailEvents: 1 });
    expect(usage.dynamo.failedConditionUnits).toBe(0);
    expect(usage.dynamo.readUnits.get('emailEvents')).toBe(0.5);
  });
});
