// The meter: instruments a running local runtime and records, per sample, every AWS-billable thing its real use
// cases and adapters do: DynamoDB reads (with the units dynalite reports) and writes (old and new item, from
// dynalite's thread), with the partition key each touched; SQS requests and their payload bytes; queue batches
// (Lambda invocations) with their measured duration; the log and EMF lines the code writes; Scheduler and
// Secrets Manager calls. Pricing is elsewhere (bench/cost/bill.ts), so the meter stays a recorder.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { AwsRetryScheduler } from '../../lambdas/adapters/aws/retry-scheduler';
import type { InProcessQueue, QueueHandler } from '../../lambdas/adapters/in-process/queue';
import type { DeliveryJob } from '../../lambdas/app/webhooks/ports';
import { type QueueName, type TableName, tables as tableSpecs } from '../../lambdas/manifest';
import type { LocalRuntime } from '../../lambdas/runtime/local/runtime';
import {
  type IndexShape,
  indexWrites,
  itemBytes,
  scalar,
  sqsRequests,
  type WireItem,
  type WireValue,
  writeUnits,
} from './billing';

export const WRITE_LOG = new URL('./dynalite-write-log.mjs', import.meta.url).href;
const WRITE_LOG_CHANNEL = 'sendflow-bench-write-log';

/** The Lambda function each local queue stands in for (its POWERTOOLS_SERVICE_NAME on AWS). */
export const QUEUE_FUNCTIONS: Readonly<Record<QueueName, string>> = {
  events: 'sendflow-dispatcher',
  deliveries: 'sendflow-delivery',
  slowDeliveries: 'sendflow-delivery',
  sends: 'sendflow-sender',
};
export const API_FUNCTION = 'sendflow-api';
/** The functions whose fan-out sends first attempts, through the bypass on AWS (DeliveryPipeline.bypassFirstAttempts). */
const FAN_OUT_FUNCTIONS = new Set(['sendflow-dispatcher', 'sendflow-sender', 'sendflow-ses-events']);

/** Units on one partition key value of a table or an index. */
export interface KeyUnits {
  wcu: number;
  rcu: number;
}

export interface QueueUsage {
  /**
   * SendMessageBatch calls (10 bodies at most); ReceiveMessage and DeleteMessageBatch as Lambda's event source
   * makes them for each batch it hands out: 10 messages a call at most, so a batch of n takes ceil(n / 10)
   * receives and ceil(acked / 10) deletes (none when every record failed).
   */
  send: number;
  receive: number;
  delete: number;
  /** Requests as billed: every started 64 KB of a send's payload is one. */
  billed: number;
  messages: number;
  largestBody: number;
}

export interface Invocation {
  readonly fn: string;
  readonly records: number;
  readonly ms: number;
}

export interface LogLine {
  readonly fn: string;
  readonly bytes: number;
  readonly emf: boolean;
  /** The line's level (none on EMF lines). */
  readonly level?: string;
}

/** One function's reads of one partition key value: units, keys read, and the distinct items among them. */
export interface FunctionReads {
  rcu: number;
  keyReads: number;
  readonly items: Set<string>;
}

/** What one sample did, in AWS's terms. */
export interface Usage {
  readonly dynamo: {
    /** `table` or `table index` → request units; failed conditional writes are in writeUnits too. */
    readonly writeUnits: Map<string, number>;
    readonly readUnits: Map<string, number>;
    readonly failedConditionUnits: number;
    /** `table|index|partition` → units on that key (index empty for the table). */
    readonly keys: Map<string, KeyUnits>;
    /** `function|table|index|partition` → that function's reads of the key (for reads a function caches). */
    readonly readsByFunction: Map<string, FunctionReads>;
    /** Items and index entries alive at the end of the sample that it wrote: table → bytes (100 B overhead each included). */
    readonly storedBytes: Map<string, number>;
    readonly calls: Map<string, number>;
    /** Every write in order, priced: what `bench/email-writes.ts` lists. */
    readonly writes: PricedWrite[];
  };
  readonly sqs: Map<QueueName, QueueUsage>;
  readonly invocations: Invocation[];
  readonly logs: LogLine[];
  /** Distinct EMF metrics: namespace, name and dimension values. */
  readonly metrics: Set<string>;
  /** EventBridge Scheduler schedules created (each fires once: one invocation). */
  scheduler: number;
  /** Messages sent with a delay that the meter held and handed out later (`holdDelayed`). */
  delayedMessages: number;
  /** The S3 requests (a GET that finds nothing is billed too), the objects and tags they left, and their bytes. */
  readonly s3: { put: number; get: number; objects: number; tags: number; storedBytes: number };
  /** Reads of the link-signing secret the code asked for (the AWS adapter caches them). */
  secretReads: number;
}

/** One write as billed: the table's units and each index's. */
export interface PricedWrite {
  readonly table: string;
  /** The item's key values (partition, sort), as text. */
  readonly key: string;
  readonly kind: 'put' | 'update' | 'delete' | 'failed condition';
  readonly units: number;
  readonly indexes: readonly { readonly name: string; readonly kind: string; readonly units: number }[];
}

interface WriteEntry {
  readonly table: string;
  readonly before?: WireItem;
  readonly after?: WireItem;
  readonly failed?: true;
  readonly key?: WireItem;
}
interface Shape {
  readonly keys: string[];
  readonly indexes: {
    name: string;
    keys: string[];
    projection: { ProjectionType: string; NonKeyAttributes?: string[] };
  }[];
}
interface LogReply {
  readonly id: number;
  readonly log: WriteEntry[];
  readonly shapes: [string, Shape][];
}

export interface Meter {
  /** Forgets what was recorded and starts recording. */
  start(): Promise<void>;
  /** Stops recording and returns what was recorded since start(). */
  stop(): Promise<Usage>;
  /** Call as the runtime's `instrument` option: the reads middleware goes on its DynamoDB client. */
  instrument(client: DynamoDBClient): void;
  /** After the runtime started: queues, retries, secrets. */
  attach(runtime: LocalRuntime): void;
  /**
   * Holds a queue's consumer (no batch is handed out) until resume(): the messages sent meanwhile wait, as a
   * backlog does on SQS, so the next receives take full batches.
   */
  pause(queue: QueueName): void;
  resume(queue: QueueName): void;
  /**
   * One batch at a time on the queue, as one Lambda container takes them: the local runtime's concurrent batches
   * share one process and its endpoint gate (an account's share of attempts in flight), which AWS's containers
   * each have for themselves, so a local burst sends jobs round the queue that AWS would not.
   */
  oneBatchAtATime(queue: QueueName): void;
  /**
   * An S3 bucket in memory for the AWS adapters (the bench gives it to the S3 body store, as AWS's functions have
   * the bucket): each PutObject and GetObject they send is counted as S3 bills it, a GET of a missing key (404
   * NoSuchKey) too, with the bytes and object tags (a PUT's Tagging) they leave stored.
   */
  s3Client(): S3Client;
  /** Wraps an API request so its log lines are the API function's and its duration is recorded. */
  api<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Time compression for workloads whose retries would wait minutes (the bad day): every message sent to `queue`
   * with a delay (a retry through SQS DelaySeconds or a Scheduler schedule, a job sent back for later) is
   * counted as sent now and held by the meter instead of the queue, until releaseDelayed().
   */
  holdDelayed(queue: QueueName): void;
  /** Puts every held message on its queue, ready now (counted when sent); returns how many. */
  releaseDelayed(): number;
  /** Messages held now. */
  readonly heldDelayed: number;
}

/** One meter per runtime; `tableNames` maps physical table names back to the manifest's. */
export function createMeter(physical: Readonly<Record<TableName, string>>): Meter {
  const logical = new Map(Object.entries(physical).map(([name, table]) => [table, name as TableName]));
  const fnContext = new AsyncLocalStorage<string>();
  let recording = false;
  let usage = emptyUsage();
  const queues: Partial<Record<QueueName, InProcessQueue>> = {};
  const consumers: Partial<Record<QueueName, QueueHandler>> = {};
  /** Each queue's own send (unwrapped), and the delayed messages held per queue (holdDelayed). */
  const sends: Partial<Record<QueueName, InProcessQueue['send']>> = {};
  const held = new Map<QueueName, string[]>();

  const channel = new BroadcastChannel(WRITE_LOG_CHANNEL);
  channel.unref();
  let seq = 0;
  const ask = (type: 'enable' | 'disable' | 'take' | 'reset') =>
    new Promise<LogReply>((resolve, reject) => {
      const id = ++seq;
      const timer = setTimeout(() => reject(new Error(`dynalite's write log did not answer ${type}`)), 10_000);
      channel.onmessage = (event) => {
        const reply = (event as unknown as { data: LogReply }).data;
        if (reply.id !== id) return;
        clearTimeout(timer);
        resolve(reply);
      };
      channel.postMessage({ type, id });
    });

  const addKey = (table: string, index: string, partition: string, units: Partial<KeyUnits>) => {
    const key = `${logical.get(table) ?? table}|${index}|${partition}`;
    const k = usage.dynamo.keys.get(key) ?? { wcu: 0, rcu: 0 };
    k.wcu += units.wcu ?? 0;
    k.rcu += units.rcu ?? 0;
    usage.dynamo.keys.set(key, k);
  };
  const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n);

  // Log and EMF lines: Powertools writes them to process.stdout through its own Console; every line is kept
  // while recording, attributed to the function whose invocation wrote it.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    // Powertools' lines (a level, or EMF's _aws): recorded while recording, never shown (the bench prints tables).
    if (text.startsWith('{') && (text.includes('"level":') || text.includes('"_aws":'))) {
      if (recording) for (const line of text.split('\n').filter(Boolean)) recordLine(line);
      return true;
    }
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;

  const recordLine = (line: string) => {
    const fn = fnContext.getStore() ?? API_FUNCTION;
    const parsed = JSON.parse(line) as {
      level?: string;
      _aws?: { CloudWatchMetrics?: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
    };
    const emf = parsed._aws?.CloudWatchMetrics;
    usage.logs.push({
      fn,
      bytes: Buffer.byteLength(line, 'utf8') + 1,
      emf: Boolean(emf),
      ...(typeof parsed.level === 'string' ? { level: parsed.level } : {}),
    });
    for (const directive of emf ?? []) {
      for (const dims of directive.Dimensions) {
        const values = dims.map((d) => `${d}=${(parsed as Record<string, unknown>)[d]}`).join(',');
        for (const metric of directive.Metrics) usage.metrics.add(`${directive.Namespace}/${metric.Name}{${values}}`);
      }
    }
  };

  return {
    async start() {
      usage = emptyUsage();
      for (const queue of Object.values(queues))
        Object.assign(queue.stats, { sendRequests: 0, receiveRequests: 0, deleteRequests: 0, messagesSent: 0 });
      await ask('reset');
      await ask('enable');
      recording = true;
    },
    async stop() {
      recording = false;
      await ask('disable');
      const reply = await ask('take');
      priceWrites(reply, usage, logical, addKey, add);
      for (const q of usage.sqs.values()) q.billed += q.receive + q.delete;
      // The shared lane's bypass (AWS only; app/webhooks/bypass-delivery-queue): a function that fans out first
      // attempts looks at the deliveries queue's depth (GetQueueAttributes) at most once a second per container,
      // and at the bypass's too while the deliveries queue is behind. Priced at one look per invocation of the
      // dispatcher, the send worker and the SES mapper: an upper bound.
      const looks = usage.invocations.filter((inv) => FAN_OUT_FUNCTIONS.has(inv.fn)).length;
      if (looks) {
        const q = usage.sqs.get('deliveries') ?? emptyQueue();
        q.billed += looks;
        usage.sqs.set('deliveries', q);
      }
      return usage;
    },
    instrument(client) {
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (!recording) return next(args);
          const operation = String(context.commandName ?? '').replace(/Command$/, '');
          const input = args.input as Record<string, unknown>;
          add(usage.dynamo.calls, `${operation} ${tablesOf(input).join(',')}`, 1);
          if (!READS.has(operation)) return next(args);
          const result = await next({ ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } });
          const consumed = (result.output as { ConsumedCapacity?: Consumed | Consumed[] }).ConsumedCapacity;
          for (const c of [consumed ?? []].flat()) {
            const table = c.TableName ?? '?';
            const units = c.CapacityUnits ?? 0;
            const index = operation === 'Query' || operation === 'Scan' ? String(input.IndexName ?? '') : '';
            add(usage.dynamo.readUnits, `${logical.get(table) ?? table}${index ? ` ${index}` : ''}`, units);
            const partitions = readPartitions(operation, input, table, index, logical);
            const items = readItems(operation, input, table);
            const fn = fnContext.getStore() ?? API_FUNCTION;
            for (const [i, p] of partitions.entries()) {
              addKey(table, index, p, { rcu: units / partitions.length });
              const id = `${fn}|${logical.get(table) ?? table}|${index}|${p}`;
              const reads = usage.dynamo.readsByFunction.get(id) ?? { rcu: 0, keyReads: 0, items: new Set<string>() };
              reads.rcu += units / partitions.length;
              reads.keyReads += 1;
              reads.items.add(items[i] ?? '(query)');
              usage.dynamo.readsByFunction.set(id, reads);
            }
          }
          return result;
        },
        { step: 'initialize', name: 'benchCostReads', priority: 'low' },
      );
    },
    attach(runtime) {
      for (const [name, queue] of Object.entries(runtime.queues) as [QueueName, InProcessQueue][]) {
        queues[name] = queue;
        const fn = QUEUE_FUNCTIONS[name];
        const send = queue.send.bind(queue);
        sends[name] = send;
        queue.send = (bodies, delaySeconds, ...rest) => {
          if (recording) {
            const q = usage.sqs.get(name) ?? emptyQueue();
            for (let i = 0; i < bodies.length; i += 10) {
              const sizes = bodies.slice(i, i + 10).map((body) => Buffer.byteLength(body, 'utf8'));
              q.send += 1;
              q.messages += sizes.length;
              q.billed += sqsRequests(sizes.reduce((a, b) => a + b, 0));
              q.largestBody = Math.max(q.largestBody, ...sizes);
            }
            usage.sqs.set(name, q);
          }
          const hold = held.get(name);
          if (hold && (delaySeconds ?? 0) > 0) {
            hold.push(...bodies);
            if (recording) usage.delayedMessages += bodies.length;
            return;
          }
          send(bodies, delaySeconds, ...rest);
        };
        // The consumer the runtime registered: each batch is one Lambda invocation, timed here, with the
        // receives and deletes the event source makes for it.
        const handle = queue as unknown as { handler?: QueueHandler };
        const handler = handle.handler;
        if (!handler) throw new Error(`queue ${name} has no consumer`);
        consumers[name] = (event) =>
          fnContext.run(fn, async () => {
            const started = performance.now();
            let failed = event.Records.length;
            try {
              const result = await handler(event);
              failed = result?.batchItemFailures?.length ?? 0;
              return result;
            } finally {
              if (recording) {
                usage.invocations.push({ fn, records: event.Records.length, ms: performance.now() - started });
                const q = usage.sqs.get(name) ?? emptyQueue();
                q.receive += Math.ceil(event.Records.length / 10);
                q.delete += Math.ceil((event.Records.length - failed) / 10);
                usage.sqs.set(name, q);
              }
            }
          });
        handle.handler = consumers[name];
      }
      const { retries, links } = runtime.services;
      const schedule = retries.schedule.bind(retries);
      // Whether the AWS adapter (adapters/aws/retry-scheduler.ts) would create a Scheduler schedule for this delay
      // or send through SQS: its own code decides, run against a Scheduler client that only notes the call.
      let created = 0;
      const aws = new AwsRetryScheduler({
        scheduler: {
          send: async () => {
            created += 1;
            return {};
          },
        } as unknown as SchedulerClient,
        queue: { send: async () => {} },
        groupName: 'bench-retries',
        queueArn: 'arn:aws:sqs:us-east-1:000000000000:bench-deliveries',
        roleArn: 'arn:aws:iam::000000000000:role/bench-scheduler',
        dlqArn: 'arn:aws:sqs:us-east-1:000000000000:bench-scheduler-dlq',
        now: () => Date.now(),
      });
      retries.schedule = async (job: DeliveryJob, delaySeconds: number) => {
        const before = created;
        await aws.schedule(job, delaySeconds);
        if (recording) usage.scheduler += created - before;
        return schedule(job, delaySeconds);
      };
      const secret = links.secret.bind(links);
      (links as { secret: () => Promise<string> }).secret = () => {
        if (recording) usage.secretReads += 1;
        return secret();
      };
    },
    s3Client() {
      const objects = new Map<string, Uint8Array>();
      const send = async (command: unknown) => {
        if (command instanceof PutObjectCommand) {
          const { Key, Body, Tagging } = command.input;
          const bytes = Body as Uint8Array;
          if (recording) {
            usage.s3.put += 1;
            usage.s3.objects += 1;
            if (Tagging) usage.s3.tags += 1;
            usage.s3.storedBytes += bytes.byteLength;
          }
          objects.set(String(Key), bytes);
          return {};
        }
        if (command instanceof GetObjectCommand) {
          if (recording) usage.s3.get += 1;
          const bytes = objects.get(String(command.input.Key));
          if (!bytes) throw new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} });
          return { Body: { transformToByteArray: async () => bytes } };
        }
        throw new Error(`The bench's S3 does not price ${(command as object).constructor.name}`);
      };
      return { send } as unknown as S3Client;
    },
    oneBatchAtATime(name) {
      const queue = queues[name] as unknown as { options: { concurrency: number } };
      queue.options = { ...queue.options, concurrency: 1 };
    },
    pause(name) {
      (queues[name] as unknown as { handler?: QueueHandler }).handler = undefined;
    },
    resume(name) {
      queues[name]?.consume(consumers[name] as QueueHandler);
    },
    holdDelayed(name) {
      if (!held.has(name)) held.set(name, []);
    },
    releaseDelayed() {
      let released = 0;
      for (const [name, bodies] of held) {
        if (!bodies.length) continue;
        const send = sends[name] as InProcessQueue['send'];
        // One at a time, as each was sent (a retry is its own SendMessage); counted when it was sent.
        for (const body of bodies.splice(0)) {
          send([body], 0);
          released += 1;
        }
      }
      return released;
    },
    get heldDelayed() {
      return [...held.values()].reduce((n, bodies) => n + bodies.length, 0);
    },
    async api(work) {
      return fnContext.run(API_FUNCTION, async () => {
        const started = performance.now();
        try {
          return await work();
        } finally {
          if (recording) usage.invocations.push({ fn: API_FUNCTION, records: 1, ms: performance.now() - started });
        }
      });
    },
  };
}

function emptyQueue(): QueueUsage {
  return { send: 0, receive: 0, delete: 0, billed: 0, messages: 0, largestBody: 0 };
}

function emptyUsage(): Usage {
  return {
    dynamo: {
      writeUnits: new Map(),
      readUnits: new Map(),
      failedConditionUnits: 0,
      keys: new Map(),
      readsByFunction: new Map(),
      storedBytes: new Map(),
      calls: new Map(),
      writes: [],
    },
    sqs: new Map(),
    invocations: [],
    logs: [],
    metrics: new Set(),
    scheduler: 0,
    delayedMessages: 0,
    secretReads: 0,
    s3: { put: 0, get: 0, objects: 0, tags: 0, storedBytes: 0 },
  };
}

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem']);

interface Consumed {
  TableName?: string;
  CapacityUnits?: number;
}

/** Storage overhead DynamoDB adds to every item and index entry (Developer Guide, "table storage"). */
const ITEM_OVERHEAD_BYTES = 100;

/** Prices the thread's write log: table units by the larger of the old and new item, and each GSI write. */
function priceWrites(
  reply: LogReply,
  usage: Usage,
  logical: Map<string, TableName>,
  addKey: (table: string, index: string, partition: string, units: Partial<KeyUnits>) => void,
  add: (map: Map<string, number>, key: string, n: number) => void,
): void {
  const shapes = new Map(reply.shapes);
  const live = new Map<string, { table: string; item?: WireItem }>();
  let failed = 0;
  for (const entry of reply.log) {
    const shape = shapes.get(entry.table);
    const name = logical.get(entry.table) ?? entry.table;
    const partitionKey = shape?.keys[0] ?? tableSpecs[name as TableName]?.partitionKey ?? '?';
    if (entry.failed) {
      // A failed condition is billed as a write of the item it was checked against (one unit at least).
      const units = writeUnits(entry.before ? itemBytes(entry.before) : 0);
      failed += units;
      add(usage.dynamo.writeUnits, name, units);
      const checked = (entry.key ?? entry.before ?? {}) as WireItem;
      const key = (shape?.keys ?? [partitionKey]).map((k) => scalar(checked[k])).join(' ');
      usage.dynamo.writes.push({ table: name, key, kind: 'failed condition', units, indexes: [] });
      addKey(entry.table, '', scalar((entry.key ?? entry.before)?.[partitionKey] as WireValue), { wcu: units });
      continue;
    }
    const units = writeUnits(
      Math.max(entry.before ? itemBytes(entry.before) : 0, entry.after ? itemBytes(entry.after) : 0),
    );
    add(usage.dynamo.writeUnits, name, units);
    const item = (entry.after ?? entry.before) as WireItem;
    addKey(entry.table, '', scalar(item[partitionKey]), { wcu: units });
    const priced: PricedWrite = {
      table: name,
      key: (shape?.keys ?? [partitionKey]).map((k) => scalar(item[k])).join(' '),
      kind: !entry.before ? 'put' : !entry.after ? 'delete' : 'update',
      units,
      indexes: [],
    };
    usage.dynamo.writes.push(priced);
    for (const index of shape?.indexes ?? []) {
      const indexShape: IndexShape = {
        name: index.name,
        keys: index.keys,
        tableKeys: shape?.keys ?? [],
        projection:
          index.projection.ProjectionType === 'INCLUDE'
            ? { type: 'INCLUDE', attributes: index.projection.NonKeyAttributes ?? [] }
            : { type: index.projection.ProjectionType as 'ALL' | 'KEYS_ONLY' },
      };
      for (const w of indexWrites(entry.before, entry.after, indexShape)) {
        add(usage.dynamo.writeUnits, `${name} ${index.name}`, w.units);
        (priced.indexes as { name: string; kind: string; units: number }[]).push({
          name: index.name,
          kind: w.kind,
          units: w.units,
        });
        addKey(entry.table, index.name, w.partition, { wcu: w.units });
      }
    }
    const id = `${entry.table} ${JSON.stringify((shape?.keys ?? []).map((k) => item[k]))}`;
    live.set(id, { table: entry.table, ...(entry.after ? { item: entry.after } : {}) });
  }
  Object.assign(usage.dynamo, { failedConditionUnits: failed });
  for (const { table, item } of live.values()) {
    if (!item) continue;
    const shape = shapes.get(table);
    let bytes = itemBytes(item) + ITEM_OVERHEAD_BYTES;
    for (const index of shape?.indexes ?? []) {
      if (!index.keys.every((k) => item[k] !== undefined)) continue;
      const kept =
        index.projection.ProjectionType === 'ALL'
          ? null
          : new Set([...(shape?.keys ?? []), ...index.keys, ...(index.projection.NonKeyAttributes ?? [])]);
      const entry = kept ? Object.fromEntries(Object.entries(item).filter(([n]) => kept.has(n))) : item;
      bytes += itemBytes(entry) + ITEM_OVERHEAD_BYTES;
    }
    add(usage.dynamo.storedBytes, logical.get(table) ?? table, bytes);
  }
}

/** The tables a call names. */
function tablesOf(input: Record<string, unknown>): string[] {
  if (typeof input.TableName === 'string') return [input.TableName];
  const items = input.RequestItems;
  return items && typeof items === 'object' ? Object.keys(items).sort() : [];
}

/** A key attribute's value from a request, marshalled or not. */
function plain(value: unknown): string {
  if (value && typeof value === 'object') return scalar(value as WireValue);
  return String(value);
}

/** The items a GetItem or BatchGetItem names, in the order of readPartitions' values (a Query's are unknown). */
function readItems(operation: string, input: Record<string, unknown>, table: string): string[] {
  if (operation === 'GetItem') return [JSON.stringify(input.Key)];
  if (operation === 'BatchGetItem') {
    const keys = (input.RequestItems as Record<string, { Keys: Record<string, unknown>[] }>)[table]?.Keys ?? [];
    return keys.map((k) => JSON.stringify(k));
  }
  return [];
}

/** The partition key values a read touches: a GetItem's key, a Query's equality on the partition key, a batch's keys. */
function readPartitions(
  operation: string,
  input: Record<string, unknown>,
  table: string,
  index: string,
  logical: Map<string, TableName>,
): string[] {
  const spec = tableSpecs[logical.get(table) as TableName];
  if (!spec) return ['?'];
  const indexSpec = index
    ? (spec as { indexes?: readonly { name: string; partitionKey: string }[] }).indexes?.find((i) => i.name === index)
    : undefined;
  const partitionKey = indexSpec?.partitionKey ?? spec.partitionKey;
  if (operation === 'GetItem') return [plain((input.Key as Record<string, unknown>)[partitionKey])];
  if (operation === 'BatchGetItem') {
    const keys = ((input.RequestItems as Record<string, { Keys: Record<string, unknown>[] }>)[table]?.Keys ?? []).map(
      (k) => plain(k[partitionKey]),
    );
    return keys.length ? keys : ['?'];
  }
  if (operation === 'Query') {
    const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
    for (const [, name, value] of String(input.KeyConditionExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
      if ((names[name as string] ?? name) === partitionKey) return [plain(values[value as string])];
    }
  }
  return ['(scan)'];
}
