// The local SQS: an in-process queue with the same contract the Lambda event source gives our handlers —
// JSON bodies, batches, per-message delays, a visibility timeout, partial batch failures, and redrive to a
// dead-letter list after maxReceiveCount. Messages live in memory; durable state (pending retries) lives in
// the tables and the reconciler re-arms it after a restart.
import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export interface QueueOptions {
  readonly batchSize: number;
  readonly visibilityTimeoutMs: number;
  readonly maxReceiveCount: number;
  /** Batches handled at once (Lambda's concurrent pollers). */
  readonly concurrency: number;
}

interface Message {
  readonly id: string;
  readonly body: string;
  readonly sentAt: number;
  receiveCount: number;
}

export type QueueHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

/** Request counts in SQS terms, for the benchmarks' cost model. */
export interface QueueStats {
  sendRequests: number;
  receiveRequests: number;
  deleteRequests: number;
  messagesSent: number;
}

export class InProcessQueue {
  readonly deadLetters: Message[] = [];
  readonly stats: QueueStats = { sendRequests: 0, receiveRequests: 0, deleteRequests: 0, messagesSent: 0 };
  private readonly ready: Message[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private handler: QueueHandler | undefined;
  /** Messages in flight, and the batches they are in (concurrency bounds batches, as Lambda pollers). */
  private running = 0;
  private batches = 0;
  private waiting = 0;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly options: QueueOptions,
  ) {}

  /** SendMessageBatch: up to 10 bodies a request; `delaySeconds` may be fractional locally. */
  send(bodies: readonly string[], delaySeconds = 0): void {
    if (this.stopped) throw new Error(`queue ${this.name} is stopped`);
    this.stats.sendRequests += Math.ceil(bodies.length / 10);
    this.stats.messagesSent += bodies.length;
    const messages = bodies.map((body) => ({ id: randomUUID(), body, sentAt: Date.now(), receiveCount: 0 }));
    if (delaySeconds > 0) {
      this.waiting += messages.length;
      this.later(delaySeconds * 1000, () => {
        this.waiting -= messages.length;
        this.ready.push(...messages);
        this.pump();
      });
    } else {
      this.ready.push(...messages);
      this.pump();
    }
  }

  /** Starts delivering batches to `handler`, like an event source mapping. */
  consume(handler: QueueHandler): void {
    this.handler = handler;
    this.pump();
  }

  /** Messages not yet handled: ready, delayed, or in flight. */
  get depth(): number {
    return this.ready.length + this.waiting + this.running;
  }

  /** Resolves when nothing is ready or in flight (delayed messages may still wait). */
  async settled(): Promise<void> {
    while (this.ready.length > 0 || this.running > 0) await new Promise((r) => setTimeout(r, 10));
  }

  /** Resolves when nothing is ready, delayed or in flight. */
  idle(): Promise<void> {
    if (this.depth === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking new batches; waits for batches in flight; drops timers. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.waiting = 0;
    while (this.running > 0) await new Promise((r) => setTimeout(r, 10));
  }

  private pump(): void {
    while (this.handler && !this.stopped && this.ready.length > 0 && this.batches < this.options.concurrency) {
      const batch = this.ready.splice(0, this.options.batchSize);
      this.running += batch.length;
      this.batches += 1;
      this.stats.receiveRequests += 1;
      void this.process(this.handler, batch);
    }
    if (this.depth === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private async process(handler: QueueHandler, batch: Message[]): Promise<void> {
    for (const message of batch) message.receiveCount += 1;
    let failed: Set<string>;
    try {
      const result = await handler({ Records: batch.map((m) => this.record(m)) });
      failed = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch {
      failed = new Set(batch.map((m) => m.id));
    }
    if (failed.size < batch.length) this.stats.deleteRequests += 1;
    for (const message of batch.filter((m) => failed.has(m.id))) {
      if (message.receiveCount >= this.options.maxReceiveCount) {
        this.deadLetters.push(message);
        continue;
      }
      this.waiting += 1;
      this.later(this.options.visibilityTimeoutMs, () => {
        this.waiting -= 1;
        this.ready.push(message);
      });
    }
    this.running -= batch.length;
    this.batches -= 1;
    this.pump();
  }

  private record(message: Message): SQSRecord {
    return {
      messageId: message.id,
      receiptHandle: message.id,
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:local:000000000000:${this.name}`,
      awsRegion: 'local',
    };
  }

  private later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      run();
      this.pump();
    }, ms);
    this.timers.add(timer);
  }
}
