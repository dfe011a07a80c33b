// The local SQS: an in-process queue with the same contract the Lambda event source gives our handlers —
// JSON bodies, batches, per-message delays, a visibility timeout, partial batch failures, and redrive to a
// dead-letter list after maxReceiveCount. With a journal (the data directory), every message is on disk before
// send() returns and stays there until acked, so a crash or a stop loses nothing: the next start hands out
// again what was ready, delayed or in flight (at least once, as SQS). Without one (`:memory:`) it is memory only.
// Ready messages are handed out round-robin across groups (`groupOf`, as SQS fair queues use MessageGroupId), so
// one tenant's burst does not hold back another's, and `reservedBatches` more pollers serve only groups with
// nothing in flight, so a tenant whose work holds every poller does not make another wait for one to end;
// `dedupeKey` keeps one pending message per key (a `replace` send drops the one it replaces).
import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { JournalMessage, QueueJournal } from './journal';

export interface QueueOptions {
  readonly batchSize: number;
  readonly visibilityTimeoutMs: number;
  readonly maxReceiveCount: number;
  /** Batches handled at once (Lambda's concurrent pollers). */
  readonly concurrency: number;
  /** Where messages are kept until acked; none keeps them in memory only. */
  readonly journal?: QueueJournal;
  /** Told when the journal cannot record a batch's outcome (the batch stays unacked on disk). */
  readonly onError?: (error: Error) => void;
  /** The fairness group of a message (a tenant): ready messages go out round-robin across groups. */
  readonly groupOf?: (body: string) => string | undefined;
  /**
   * Batches handed out beyond `concurrency`, made only of groups that have no message in flight: when one
   * group's long batches hold every poller, another group's message still goes out at once.
   */
  readonly reservedBatches?: number;
  /**
   * Messages that mean the same work (e.g. "send email X"): a send is skipped while a message with its key is
   * pending (ready, delayed or in flight) and becomes visible no later, so a re-queue after a restart never
   * doubles what the journal already holds.
   */
  readonly dedupeKey?: (body: string) => string | undefined;
  /**
   * The DLQ as a queue of its own (as SQS's redrive policy names one): a message past maxReceiveCount is sent
   * there (journaled by it) before this queue lets it go, so a consumer of the DLQ handles it. Without one, it
   * stays in `deadLetters` (and this queue's journal) only.
   */
  readonly redriveTo?: InProcessQueue;
}

type Message = JournalMessage;

/** setTimeout's longest delay (about 24.8 days); longer delays are re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  private readonly ready = new ReadyByGroup();
  /** Each message's group while it is ready or in flight, and the messages in flight per group. */
  private readonly groupOfMessage = new WeakMap<Message, string>();
  private readonly inFlightByGroup = new Map<string, number>();
  /** The pending message of each dedupe key (the one that becomes visible first). */
  private readonly pendingByKey = new Map<string, Message>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The timer of each delayed message. */
  private readonly timerOf = new Map<Message, NodeJS.Timeout>();
  private handler: QueueHandler | undefined;
  /** Messages in flight, and the batches they are in (concurrency bounds batches, as Lambda pollers). */
  private running = 0;
  private batches = 0;
  private waiting = 0;
  private idleWaiters: (() => void)[] = [];
  /** Draining: no new batch is taken and no timer armed; sends are still accepted (and journaled). */
  private draining = false;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly options: QueueOptions,
  ) {
    const journal = options.journal;
    if (!journal) return;
    this.deadLetters.push(...journal.deadLetters());
    // Oldest first; what was in flight at a crash is simply ready again.
    for (const message of journal.messages().sort((a, b) => a.sentAt - b.sentAt)) {
      this.holdKey(message);
      this.enqueue(message);
    }
  }

  /**
   * SendMessageBatch: up to 10 bodies a request; `delaySeconds` may be fractional locally. `replace`: each
   * message becomes its key's pending one, and the one it replaces is dropped (its timer cleared, acked in the
   * journal after the new one is written, so a crash in between keeps both, never neither): a send moved (PATCH)
   * leaves one message and one timer, however often it moves. A message already in flight is not taken back.
   */
  send(bodies: readonly string[], delaySeconds = 0, options: { replace?: boolean } = {}): void {
    if (this.stopped) throw new Error(`queue ${this.name} is stopped`);
    const now = Date.now();
    const visibleAt = now + Math.max(0, delaySeconds) * 1000;
    const replaced: Message[] = [];
    const messages = bodies
      .map((body) => ({ id: randomUUID(), body, sentAt: now, receiveCount: 0, visibleAt }))
      .filter((message) => this.holdKey(message, options.replace === true, replaced));
    if (messages.length === 0) return;
    this.stats.sendRequests += Math.ceil(messages.length / 10);
    this.stats.messagesSent += messages.length;
    this.options.journal?.sent(messages);
    const dropped = replaced.filter((message) => this.unqueue(message));
    if (dropped.length) this.options.journal?.acked(dropped.map((message) => message.id));
    for (const message of messages) this.enqueue(message);
    this.pump();
  }

  /** Starts delivering batches to `handler`, like an event source mapping. */
  consume(handler: QueueHandler): void {
    this.handler = handler;
    this.pump();
  }

  /** An SQS-shaped ARN, the eventSourceARN of its records. */
  get arn(): string {
    return `arn:aws:sqs:local:000000000000:${this.name}`;
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

  /**
   * Stops taking new batches and drops timers, then waits up to `waitMs` for the batches in flight. Sends are
   * still accepted meanwhile (a batch in flight may publish), and kept for the next start.
   */
  async drain(waitMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.draining = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.timerOf.clear();
    this.waiting = 0;
    const deadline = Date.now() + waitMs;
    while (this.running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }

  /**
   * drain(), then no more sends, and the journal closed: what is not acked by then (delayed, or still in
   * flight) stays in it for the next start.
   */
  async stop(waitMs = Number.POSITIVE_INFINITY): Promise<void> {
    await this.drain(waitMs);
    this.stopped = true;
    this.options.journal?.close();
  }

  /** Ready now, or at its visibleAt. */
  private enqueue(message: Message): void {
    // Draining: it is in the journal for the next start (in memory only, it goes as delayed messages always did).
    if (this.draining) return;
    const group = this.options.groupOf?.(message.body) ?? '';
    this.groupOfMessage.set(message, group);
    if (message.visibleAt <= Date.now()) {
      this.ready.push(group, message);
      return;
    }
    this.waiting += 1;
    this.later(
      message.visibleAt,
      () => {
        this.waiting -= 1;
        this.ready.push(group, message);
      },
      message,
    );
  }

  /** Takes a message that is delayed or ready out of the queue (false: it is in flight, or gone already). */
  private unqueue(message: Message): boolean {
    const timer = this.timerOf.get(message);
    if (timer) {
      clearTimeout(timer);
      this.timers.delete(timer);
      this.timerOf.delete(message);
      this.waiting -= 1;
      return true;
    }
    return this.ready.remove(this.groupOfMessage.get(message) ?? '', message);
  }

  /**
   * Notes the message as its key's pending one; false when an already pending message of that key becomes
   * visible no later (this one is redundant). Messages without a key always pass.
   */
  private holdKey(message: Message, replace = false, replaced: Message[] = []): boolean {
    const key = this.options.dedupeKey?.(message.body);
    if (key === undefined) return true;
    const held = this.pendingByKey.get(key);
    if (held && held.visibleAt <= message.visibleAt && !replace) return false;
    if (held && replace) replaced.push(held);
    this.pendingByKey.set(key, message);
    return true;
  }

  private releaseKey(message: Message): void {
    const key = this.options.dedupeKey?.(message.body);
    if (key !== undefined && this.pendingByKey.get(key) === message) this.pendingByKey.delete(key);
  }

  private pump(): void {
    const { batchSize, concurrency, reservedBatches = 0 } = this.options;
    const quiet = (group: string) => !this.inFlightByGroup.has(group);
    while (this.handler && !this.draining && this.ready.length > 0) {
      const batch =
        this.batches < concurrency
          ? this.ready.take(batchSize)
          : this.batches < concurrency + reservedBatches
            ? this.ready.take(batchSize, quiet)
            : [];
      if (batch.length === 0) break;
      this.start(this.handler, batch);
    }
    if (this.depth === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private start(handler: QueueHandler, batch: Message[]): void {
    this.running += batch.length;
    this.batches += 1;
    this.stats.receiveRequests += 1;
    for (const message of batch) this.countInFlight(message, 1);
    this.process(handler, batch).catch((error: unknown) => this.options.onError?.(error as Error));
  }

  private countInFlight(message: Message, delta: 1 | -1): void {
    const group = this.groupOfMessage.get(message) ?? '';
    const count = (this.inFlightByGroup.get(group) ?? 0) + delta;
    if (count > 0) this.inFlightByGroup.set(group, count);
    else this.inFlightByGroup.delete(group);
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
    try {
      if (failed.size < batch.length) this.stats.deleteRequests += 1;
      const acked = batch.filter((m) => !failed.has(m.id));
      this.options.journal?.acked(acked.map((m) => m.id));
      for (const message of acked) this.releaseKey(message);
      for (const message of batch.filter((m) => failed.has(m.id))) {
        if (message.receiveCount >= this.options.maxReceiveCount) {
          this.releaseKey(message);
          this.deadLetters.push(message);
          const dlq = this.options.redriveTo;
          if (dlq) {
            // On the DLQ's journal first: a crash between the two hands it to the DLQ twice, never zero times.
            dlq.send([message.body]);
            this.options.journal?.acked([message.id]);
          } else {
            this.options.journal?.buried(message);
          }
          continue;
        }
        message.visibleAt = Date.now() + this.options.visibilityTimeoutMs;
        this.options.journal?.requeued(message);
        this.enqueue(message);
      }
    } finally {
      // A journal that cannot be written (a full disk) leaves the batch unacked on disk, never the queue stuck.
      this.running -= batch.length;
      this.batches -= 1;
      for (const message of batch) this.countInFlight(message, -1);
      this.pump();
    }
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
      eventSourceARN: this.arn,
      awsRegion: 'local',
    };
  }

  /**
   * Runs `run` at epoch ms `at` (in steps of at most MAX_TIMER_MS), unless the queue stops first. `owner`: the
   * delayed message, whose timer is then known (a replaced message's is cleared).
   */
  private later(at: number, run: () => void, owner?: Message): void {
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        if (owner) this.timerOf.delete(owner);
        if (this.draining) return;
        if (Date.now() < at) return this.later(at, run, owner);
        run();
        this.pump();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now())),
    );
    this.timers.add(timer);
    if (owner) this.timerOf.set(owner, timer);
  }
}

/** Ready messages by group, first in first out within a group, handed out round-robin across groups. */
class ReadyByGroup {
  /** A Map keeps insertion order: a group served goes to the back, which makes the rotation. */
  private readonly groups = new Map<string, Message[]>();
  length = 0;

  push(group: string, message: Message): void {
    const queue = this.groups.get(group);
    if (queue) queue.push(message);
    else this.groups.set(group, [message]);
    this.length += 1;
  }

  /** Takes `message` out if it is still ready; false otherwise. */
  remove(group: string, message: Message): boolean {
    const queue = this.groups.get(group);
    const at = queue?.indexOf(message) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    this.length -= 1;
    if (queue.length === 0) this.groups.delete(group);
    return true;
  }

  /** Up to `count` messages, one a group in turn; only from groups `eligible` admits when it is given. */
  take(count: number, eligible?: (group: string) => boolean): Message[] {
    const taken: Message[] = [];
    for (const [group, queue] of this.groups) {
      if (taken.length >= count) break;
      if (eligible && !eligible(group)) continue;
      taken.push(queue.shift() as Message);
      this.length -= 1;
      this.groups.delete(group);
      if (queue.length > 0) this.groups.set(group, queue);
    }
    return taken;
  }
}
