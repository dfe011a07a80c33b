// bench:scale's model of an SQS standard queue and of the SQS client the real adapters call (SendMessageBatch):
// messages with DelaySeconds (0–900), a retention period (a message older than it is deleted unseen: `expired`),
// a visibility timeout (a received message not deleted in time is received again), maxReceiveCount (then the
// redrive policy's DLQ, keeping the message's first enqueue time, as standard queues do), and fair queues (SQS
// Developer Guide, "How Amazon SQS fair queues work"): each MessageGroupId is a tenant; a tenant with more than 10%
// of the messages in flight (and at least 30), or more than 10% of the consumers' recent processing time, is a
// noisy neighbour while it has a backlog, and a receive takes quiet tenants' messages first (the oldest first),
// then noisy tenants' (the one with the fewest in flight first). Otherwise a receive takes the oldest ready
// messages: best-effort FIFO, as a standard queue's. Requests are counted as SQS bills them (10 messages a call).
// GetQueueAttributes answers ApproximateNumberOfMessages with the messages ready now (SQS's figure is approximate,
// and may lag).
// Left out: SQS's own throughput limits (a standard queue's are "nearly unlimited"), the 256 KB payload limit
// (the adapters enforce it), duplicates SQS itself may deliver (at-least-once), and short polling's sampling.
import {
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
} from '@aws-sdk/client-sqs';
import { MinHeap } from './heap';
import type { VirtualTime } from './virtual-time';

export interface SimMessage {
  readonly id: number;
  /** Null until received, for a preloaded backlog's messages (made on first receive, to bound memory). */
  body: string | null;
  readonly make?: () => string;
  readonly group: string;
  /** When it was first enqueued (retention counts from here, a DLQ's copy included). */
  readonly sentAt: number;
  readyAt: number;
  receiveCount: number;
  /** Bumped on each receive: a visibility timer of an earlier receive finds it changed and does nothing. */
  receipt: number;
  inFlight: boolean;
}

interface Group {
  readonly name: string;
  readonly ready: SimMessage[];
  head: number;
  /**
   * A preloaded backlog ahead of `ready`: this many messages made by `make`, the first enqueued at `backlogAt`,
   * each next one `backlogSpacingMs` later (an outage's backlog builds up over its hour, its tenants interleaved).
   */
  backlog: number;
  backlogAt: number;
  backlogSpacingMs: number;
  makeBacklog?: (n: number) => string;
  made: number;
  inFlight: number;
  /** Consumers' processing time of its messages lately (ms, decayed by the minute). */
  recentMs: number;
  lastSentAt: number;
  noisy: boolean;
  /** The head time its entry in the quiet line has (-1: none). */
  queuedAt: number;
}

export interface QueueSettings {
  readonly name: string;
  readonly retentionSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  /** Receives before the redrive to `dlq` (none: never). */
  readonly maxReceiveCount?: number;
  readonly dlq?: SimQueue;
}

export interface QueueCounts {
  sendRequests: number;
  sentMessages: number;
  receiveRequests: number;
  receivedMessages: number;
  deleteRequests: number;
  /** GetQueueAttributes (ApproximateNumberOfMessages: the bypass's look at the queue's depth). */
  attributeRequests: number;
  expired: number;
  redriven: number;
  /** The oldest age a message reached when it was received (ms). */
  maxAgeAtReceiveMs: number;
}

const NOISY_SHARE = 0.1;
const NOISY_MIN_IN_FLIGHT = 30;
const QUIET_AFTER_MS = 5 * 60_000;

export class SimQueue {
  readonly counts: QueueCounts = {
    sendRequests: 0,
    sentMessages: 0,
    receiveRequests: 0,
    receivedMessages: 0,
    deleteRequests: 0,
    attributeRequests: 0,
    expired: 0,
    redriven: 0,
    maxAgeAtReceiveMs: 0,
  };
  private readonly groups = new Map<string, Group>();
  private nextId = 1;
  private delayed = 0;
  private readyCount = 0;
  private inFlightCount = 0;
  private noisyNow: Group[] = [];
  /** Told when messages become ready (the event source mapping polls). */
  onReady: () => void = () => {};

  constructor(
    readonly settings: QueueSettings,
    private readonly time: VirtualTime,
    /** The simulation's scale-down factor: the noisy threshold's 30 messages in flight is divided by it. */
    private readonly scale = 1,
  ) {
    this.time.after(1000, () => this.classify());
  }

  get arn(): string {
    return `arn:aws:sqs:sim:000000000000:${this.settings.name}`;
  }

  /** Messages ready now. */
  get ready(): number {
    return this.readyCount;
  }

  /** Ready, delayed and in flight. */
  get depth(): number {
    return this.readyCount + this.delayed + this.inFlightCount;
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  /** One SendMessageBatch request's messages (the caller counts the request). */
  put(entries: readonly { body: string; delaySeconds: number; group?: string }[], sentAt = this.time.now()): void {
    this.counts.sentMessages += entries.length;
    for (const entry of entries) {
      const delay = Math.max(0, Math.min(900, entry.delaySeconds));
      const message: SimMessage = {
        id: this.nextId++,
        body: entry.body,
        group: entry.group ?? `msg-${this.nextId}`,
        sentAt,
        readyAt: this.time.now() + delay * 1000,
        receiveCount: 0,
        receipt: 0,
        inFlight: false,
      };
      this.group(message.group).lastSentAt = this.time.now();
      if (delay > 0) {
        this.delayed += 1;
        this.time.at(message.readyAt, () => {
          this.delayed -= 1;
          this.enqueue(message);
        });
      } else this.enqueue(message);
    }
  }

  /**
   * A backlog already in the queue: `count` messages of `group`, enqueued evenly from `sentAt` until `lastSentAt`
   * (each one's retention counts from its own time), the tenant's last sent at `lastSentAt`; bodies made on receive.
   */
  preload(group: string, count: number, sentAt: number, lastSentAt: number, make: (n: number) => string): void {
    const g = this.group(group);
    g.backlog += count;
    g.backlogAt = sentAt;
    g.backlogSpacingMs = count > 0 ? (lastSentAt - sentAt) / count : 0;
    g.makeBacklog = make;
    g.queuedAt = -1;
    g.lastSentAt = lastSentAt;
    this.line(g);
    this.readyCount += count;
    this.counts.sentMessages += count;
    this.onReady();
  }

  /**
   * ReceiveMessage calls for up to `max` messages (10 a call), fair across tenants as above; each received
   * message is in flight for the visibility timeout. Expired messages met on the way are deleted.
   */
  receive(max: number): SimMessage[] {
    const now = this.time.now();
    const taken: SimMessage[] = [];
    while (taken.length < max && this.readyCount > 0) {
      const group = this.pick();
      if (!group) break;
      const message = this.take(group);
      this.line(group);
      if (now - message.sentAt > this.settings.retentionSeconds * 1000) {
        this.counts.expired += 1;
        continue;
      }
      this.counts.maxAgeAtReceiveMs = Math.max(this.counts.maxAgeAtReceiveMs, now - message.sentAt);
      message.receiveCount += 1;
      message.receipt += 1;
      message.inFlight = true;
      group.inFlight += 1;
      this.inFlightCount += 1;
      const receipt = message.receipt;
      this.time.after(this.settings.visibilityTimeoutSeconds * 1000, () => this.expireVisibility(message, receipt));
      taken.push(message);
    }
    this.counts.receiveRequests += Math.max(1, Math.ceil(taken.length / 10));
    this.counts.receivedMessages += taken.length;
    return taken;
  }

  /** DeleteMessageBatch for handled messages (10 a call); `processedMs` counts toward their tenants' time share. */
  delete(messages: readonly SimMessage[], processedMs: number): void {
    if (messages.length) this.counts.deleteRequests += Math.ceil(messages.length / 10);
    for (const message of messages) {
      if (!message.inFlight) continue;
      this.leaveFlight(message, processedMs);
      message.receipt += 1;
    }
  }

  /** Messages whose handling failed: they stay in flight until their visibility timeout (partial batch response). */
  failed(messages: readonly SimMessage[], processedMs: number): void {
    for (const message of messages) {
      const group = this.groups.get(message.group);
      if (group) group.recentMs += processedMs;
    }
  }

  /** Each tenant's (MessageGroupId's) messages ready now. */
  readyByGroup(): Map<string, number> {
    const ready = new Map<string, number>();
    for (const g of this.groups.values()) {
      const n = g.backlog + g.ready.length - g.head;
      if (n > 0) ready.set(g.name, n);
    }
    return ready;
  }

  /** Every message of the queue (ready, delayed, in flight) that is older than the retention now. */
  overdue(): number {
    const now = this.time.now();
    let n = 0;
    for (const g of this.groups.values()) {
      // (The backlog's oldest left stands for all of it: an upper bound.)
      if (g.backlog && now - this.backlogTime(g, g.made) > this.settings.retentionSeconds * 1000) n += g.backlog;
      for (let i = g.head; i < g.ready.length; i++) {
        if (now - (g.ready[i] as SimMessage).sentAt > this.settings.retentionSeconds * 1000) n += 1;
      }
    }
    return n;
  }

  private group(name: string): Group {
    let g = this.groups.get(name);
    if (!g) {
      g = {
        name,
        ready: [],
        head: 0,
        backlog: 0,
        backlogAt: 0,
        backlogSpacingMs: 0,
        made: 0,
        inFlight: 0,
        recentMs: 0,
        lastSentAt: 0,
        noisy: false,
        queuedAt: -1,
      };
      this.groups.set(name, g);
    }
    return g;
  }

  private enqueue(message: SimMessage): void {
    message.readyAt = this.time.now();
    const g = this.group(message.group);
    g.ready.push(message);
    this.readyCount += 1;
    this.line(g);
    this.onReady();
  }

  private hasReady(g: Group): boolean {
    return g.backlog > 0 || g.head < g.ready.length;
  }

  private headAt(g: Group): number {
    return g.backlog > 0 ? this.backlogTime(g, g.made) : ((g.ready[g.head] as SimMessage).readyAt ?? 0);
  }

  /** When the backlog's `n`th message was enqueued. */
  private backlogTime(g: Group, n: number): number {
    return Math.round(g.backlogAt + n * g.backlogSpacingMs);
  }

  /** The tenant whose message goes next: the oldest ready among quiet tenants, else the least busy noisy one. */
  private pick(): Group | undefined {
    for (;;) {
      const top = this.quiet.pop();
      if (!top) break;
      const g = top.group;
      if (g.noisy || !this.hasReady(g) || this.headAt(g) !== top.at || g.queuedAt !== top.at) continue;
      g.queuedAt = -1;
      return g;
    }
    let least: Group | undefined;
    for (const g of this.noisyNow) {
      if (!this.hasReady(g)) continue;
      if (!least || g.inFlight < least.inFlight) least = g;
    }
    return least;
  }

  /** Quiet tenants with ready messages, by their oldest ready message (entries go stale; pick() skips those). */
  private readonly quiet = new MinHeap<{ group: Group; at: number }>((a, b) => a.at < b.at);

  /** Puts a quiet tenant with ready messages (back) in line by its oldest ready message. */
  private line(g: Group): void {
    if (g.noisy || !this.hasReady(g)) return;
    const at = this.headAt(g);
    if (g.queuedAt === at) return;
    g.queuedAt = at;
    this.quiet.push({ group: g, at });
  }

  private take(g: Group): SimMessage {
    this.readyCount -= 1;
    if (g.backlog > 0) {
      g.backlog -= 1;
      const n = g.made++;
      const make = g.makeBacklog as (n: number) => string;
      return {
        id: this.nextId++,
        body: make(n),
        group: g.name,
        sentAt: this.backlogTime(g, n),
        readyAt: this.backlogTime(g, n),
        receiveCount: 0,
        receipt: 0,
        inFlight: false,
      };
    }
    const message = g.ready[g.head] as SimMessage;
    g.ready[g.head] = undefined as unknown as SimMessage;
    g.head += 1;
    if (g.head > 1024 && g.head * 2 > g.ready.length) {
      g.ready.splice(0, g.head);
      g.head = 0;
    }
    return message;
  }

  private leaveFlight(message: SimMessage, processedMs: number): void {
    message.inFlight = false;
    this.inFlightCount -= 1;
    const g = this.groups.get(message.group);
    if (g) {
      g.inFlight -= 1;
      g.recentMs += processedMs;
    }
  }

  private expireVisibility(message: SimMessage, receipt: number): void {
    if (!message.inFlight || message.receipt !== receipt) return;
    this.leaveFlight(message, 0);
    const { maxReceiveCount, dlq } = this.settings;
    if (maxReceiveCount !== undefined && message.receiveCount >= maxReceiveCount && dlq) {
      this.counts.redriven += 1;
      dlq.put([{ body: message.body ?? '', delaySeconds: 0, group: message.group }], message.sentAt);
      return;
    }
    this.enqueue(message);
  }

  /** Once a second: which tenants are noisy neighbours, and the processing time shares decay (a minute's memory). */
  private classify(): void {
    let totalMs = 0;
    for (const g of this.groups.values()) totalMs += g.recentMs;
    const now = this.time.now();
    const noisy: Group[] = [];
    this.quiet.clear();
    for (const g of this.groups.values()) {
      const concurrency =
        g.inFlight >= NOISY_MIN_IN_FLIGHT / this.scale && g.inFlight > NOISY_SHARE * this.inFlightCount;
      const processing = totalMs > 0 && g.recentMs > NOISY_SHARE * totalMs;
      // Noisy while it has a backlog and sent within 5 minutes (a tenant that stopped sending is quiet again).
      g.noisy = this.hasReady(g) && now - g.lastSentAt < QUIET_AFTER_MS && (concurrency || processing);
      if (g.noisy) noisy.push(g);
      g.queuedAt = -1;
      this.line(g);
      g.recentMs *= Math.exp(-1 / 60);
      if (!this.hasReady(g) && g.inFlight === 0 && g.recentMs < 1 && now - g.lastSentAt > QUIET_AFTER_MS) {
        this.groups.delete(g.name);
      }
    }
    this.noisyNow = noisy;
    this.time.after(1000, () => this.classify());
  }
}

/**
 * The SQS client the real adapters (SqsDeliveryQueue, SqsEventPublisher, SqsRecoveryQueue) are given: each
 * SendMessageBatch goes to the queue its QueueUrl names, after `latencyMs` (an API round trip).
 */
export class SimSqsClient {
  constructor(
    private readonly queues: ReadonlyMap<string, SimQueue>,
    private readonly time: VirtualTime,
    private readonly latencyMs: number,
  ) {}

  async send(command: unknown): Promise<Partial<SendMessageBatchCommandOutput> | { Attributes: object }> {
    if (command instanceof GetQueueAttributesCommand) {
      // ApproximateNumberOfMessages: the messages ready now (exact here; SQS's is approximate).
      const queue = this.queues.get(String(command.input.QueueUrl));
      if (!queue) throw new Error(`no simulated queue at ${command.input.QueueUrl}`);
      await this.time.sleep(this.latencyMs);
      queue.counts.attributeRequests += 1;
      return { Attributes: { ApproximateNumberOfMessages: String(queue.ready) } };
    }
    if (!(command instanceof SendMessageBatchCommand)) {
      throw new Error(`bench:scale's SQS does not model ${(command as object).constructor.name}`);
    }
    const { QueueUrl, Entries = [] } = command.input;
    const queue = this.queues.get(String(QueueUrl));
    if (!queue) throw new Error(`no simulated queue at ${QueueUrl}`);
    if (Entries.length > 10) throw new Error('SendMessageBatch takes at most 10 entries');
    await this.time.sleep(this.latencyMs);
    queue.counts.sendRequests += 1;
    queue.put(
      Entries.map((e) => ({
        body: String(e.MessageBody),
        delaySeconds: e.DelaySeconds ?? 0,
        ...(e.MessageGroupId ? { group: e.MessageGroupId } : {}),
      })),
    );
    return { Successful: Entries.map((e) => ({ Id: e.Id ?? '', MessageId: 'sim', MD5OfMessageBody: '' })), Failed: [] };
  }
}
