// bench:scale's model of Lambda and its SQS event source mappings (Lambda Developer Guide, "Configuring scaling
// behavior for SQS event source mappings", "Lambda parameters for Amazon SQS event source mappings"): each mapping
// starts with 5 concurrent batches when its queue has messages and adds up to 300 a minute while it stays busy, up
// to its MaximumConcurrency; a batch is up to BatchSize messages (received 10 a call), gathered for up to the
// batching window when fewer are ready; every invocation takes one of the account's unreserved concurrent
// executions (throttled, the mapping tries again a second later); a container runs one batch at a time and is kept
// warm for the next (a new one pays a cold start); an invocation past the function's time-out is stopped and its
// messages come back after the visibility timeout; with ReportBatchItemFailures the handled messages are deleted
// (10 a call) and the failed ones come back after the visibility timeout. The handler is the real one; only its
// time on the clock is the model's: what it awaits (endpoints, DynamoDB, SQS calls), plus a fixed CPU cost per
// invocation and per record. Left out: the 6 MB payload bound of a batch (the jobs here are small), containers
// going cold when idle, and Lambda's own scaling down (a mapping keeps what it scaled to while busy).
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { SimMessage, SimQueue } from './sqs';
import type { VirtualTime } from './virtual-time';

export type Handler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

/** The account's concurrent executions left after the reservations (the API's and the authorizer's). */
export class AccountConcurrency {
  inUse = 0;
  peak = 0;
  throttles = 0;

  constructor(readonly limit: number) {}

  take(): boolean {
    if (this.inUse >= this.limit) {
      this.throttles += 1;
      return false;
    }
    this.inUse += 1;
    this.peak = Math.max(this.peak, this.inUse);
    return true;
  }

  give(): void {
    this.inUse -= 1;
  }
}

export interface FunctionSettings {
  readonly name: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly coldStartMs: number;
  /** CPU time the model charges per invocation and per record (JSON, zod, signing, the SDK's marshalling). */
  readonly cpuPerInvocationMs: number;
  readonly cpuPerRecordMs: number;
  /** A container's own handler (its own in-memory state: the lanes' gate, the webhook cache). */
  readonly newContainer: () => Handler;
}

/** One function's containers and its bill. */
export class SimFunction {
  private readonly idle: Handler[] = [];
  invocations = 0;
  coldStarts = 0;
  timeouts = 0;
  gbSeconds = 0;
  records = 0;

  constructor(readonly settings: FunctionSettings) {}

  container(): { handler: Handler; cold: boolean } {
    const warm = this.idle.pop();
    if (warm) return { handler: warm, cold: false };
    this.coldStarts += 1;
    return { handler: this.settings.newContainer(), cold: true };
  }

  release(handler: Handler): void {
    this.idle.push(handler);
  }

  bill(ms: number, records: number): void {
    this.invocations += 1;
    this.records += records;
    this.gbSeconds += (this.settings.memoryMb / 1024) * (Math.ceil(ms) / 1000);
  }
}

export interface MappingSettings {
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  readonly maxConcurrency: number;
  /** The simulation's scale-down factor: the 5 first batches and the 5 added a second are divided by it. */
  readonly scale?: number;
}

const START_CONCURRENCY = 5;
/** Up to 300 more concurrent batches a minute: 5 a second. */
const SCALE_STEP_PER_SECOND = 5;
const GATHER_POLL_MS = 50;

export class EventSourceMapping {
  private running = 0;
  private limit: number;
  private polling = false;
  peakConcurrency = 0;

  constructor(
    readonly queue: SimQueue,
    readonly fn: SimFunction,
    readonly settings: MappingSettings,
    private readonly account: AccountConcurrency,
    private readonly time: VirtualTime,
    /** Told after every invocation: its records, how each ended, its duration. */
    private readonly onInvocation: (
      records: readonly SimMessage[],
      failed: ReadonlySet<number>,
      ms: number,
    ) => void = () => {},
  ) {
    this.limit = Math.max(1, START_CONCURRENCY / (settings.scale ?? 1));
    queue.onReady = () => this.poll();
    this.time.after(1000, () => this.scale());
  }

  /** Starts batches while there are messages, room under the mapping's limit, and account concurrency. */
  private poll(): void {
    if (this.polling) return;
    this.polling = true;
    // Once per instant: what the instant's sends made ready is gathered together.
    this.time.after(0, () => {
      this.polling = false;
      while (this.queue.ready > 0 && this.running < Math.min(Math.floor(this.limit), this.settings.maxConcurrency)) {
        if (!this.account.take()) {
          this.time.after(1000, () => this.poll());
          return;
        }
        this.running += 1;
        this.peakConcurrency = Math.max(this.peakConcurrency, this.running);
        const batch = this.queue.receive(Math.min(10, this.settings.batchSize));
        void this.gather(batch);
      }
    });
  }

  /** Fills the batch for up to the batching window (10 a receive), then invokes. */
  private async gather(batch: SimMessage[]): Promise<void> {
    const windowEnds = this.time.now() + this.settings.batchingWindowSeconds * 1000;
    while (batch.length < this.settings.batchSize) {
      if (this.queue.ready > 0) {
        batch.push(...this.queue.receive(Math.min(10, this.settings.batchSize - batch.length)));
        continue;
      }
      if (this.time.now() >= windowEnds) break;
      await this.time.sleep(Math.min(GATHER_POLL_MS, windowEnds - this.time.now()));
    }
    if (batch.length === 0) {
      this.finish();
      return;
    }
    await this.invoke(batch);
  }

  private async invoke(batch: SimMessage[]): Promise<void> {
    const fn = this.fn;
    const started = this.time.now();
    const { handler, cold } = fn.container();
    const { coldStartMs, cpuPerInvocationMs, cpuPerRecordMs, timeoutSeconds } = fn.settings;
    const event: SQSEvent = { Records: batch.map((m) => this.record(m)) };
    let failed = new Set<number>();
    let timedOut = false;
    try {
      await this.time.sleep((cold ? coldStartMs : 0) + cpuPerInvocationMs + cpuPerRecordMs * batch.length);
      const result = await Promise.race([
        handler(event),
        this.time.sleep(timeoutSeconds * 1000).then(() => 'timeout' as const),
      ]);
      if (result === 'timeout') {
        timedOut = true;
        fn.timeouts += 1;
        if (process.env.BENCH_SCALE_DEBUG)
          console.log(
            `time-out: ${this.queue.settings.name}, ${batch.length} records, started ${started}, cold ${cold}`,
          );
      } else {
        failed = new Set(
          ((result as SQSBatchResponse | undefined)?.batchItemFailures ?? []).map((f) => Number(f.itemIdentifier)),
        );
      }
    } catch {
      failed = new Set(batch.map((m) => m.id));
    }
    const ms = this.time.now() - started;
    fn.bill(ms, batch.length);
    if (timedOut) {
      // Stopped: every message comes back after its visibility timeout; the container is gone.
      this.queue.failed(batch, ms);
    } else {
      this.queue.delete(
        batch.filter((m) => !failed.has(m.id)),
        ms,
      );
      this.queue.failed(
        batch.filter((m) => failed.has(m.id)),
        ms,
      );
      fn.release(handler);
    }
    this.onInvocation(batch, timedOut ? new Set(batch.map((m) => m.id)) : failed, ms);
    this.finish();
  }

  private finish(): void {
    this.running -= 1;
    this.account.give();
    this.poll();
  }

  private record(m: SimMessage): SQSRecord {
    return {
      messageId: String(m.id),
      receiptHandle: String(m.id),
      body: m.body ?? '',
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: 'sim',
        ApproximateFirstReceiveTimestamp: String(this.time.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: this.queue.arn,
      awsRegion: 'sim',
    };
  }

  /** Each second: 5 more concurrent batches while the queue keeps a backlog and every batch is busy. */
  private scale(): void {
    const max = this.settings.maxConcurrency;
    const step = SCALE_STEP_PER_SECOND / (this.settings.scale ?? 1);
    if (this.queue.ready > 0 && this.running >= Math.floor(this.limit)) this.limit = Math.min(max, this.limit + step);
    this.poll();
    this.time.after(1000, () => this.scale());
  }

  get concurrency(): number {
    return this.running;
  }
}
