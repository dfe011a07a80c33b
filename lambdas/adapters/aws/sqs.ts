// SQS adapters of the pipeline's queue ports: delivery jobs onto the deliveries queue, events onto the events
// queue. SendMessageBatch in chunks (10 entries and 256 KiB a request); an entry SQS refuses fails the whole
// call, so the caller's own SQS record is retried rather than a job being silently dropped (the consumers are
// idempotent: deterministic delivery ids and conditional writes make a resent job harmless). Every message
// names its account as MessageGroupId, which makes a standard queue a fair queue: one tenant's backlog does not
// hold back another's messages (as the local queues' groups do).
import {
  type BatchResultErrorEntry,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { QueueDepth } from '../../app/webhooks/bypass-delivery-queue';
import type { DeliveryJob, DeliveryQueue, EventPublisher, RecoveryQueue, RecoveryStep } from '../../app/webhooks/ports';
import type { SendflowEvent } from '../../domain/events';
import { encodeEvent, encodeJob, encodeStep } from '../../handlers/queue/messages';

/** SQS limits: entries per SendMessageBatch, the per-message delay, and the request payload we allow. */
export const SQS_BATCH_ENTRIES = 10;
export const SQS_MAX_DELAY_SECONDS = 900;
export const SQS_MAX_BATCH_BYTES = 256 * 1024;

export class QueueSendError extends Error {
  constructor(
    message: string,
    readonly failed: readonly BatchResultErrorEntry[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'QueueSendError';
  }
}

/** SQS wants whole seconds from 0 to 900; we round a fractional delay up so nothing runs early. */
export function sqsDelaySeconds(delaySeconds = 0): number {
  if (!Number.isFinite(delaySeconds) || delaySeconds <= 0) return 0;
  return Math.min(SQS_MAX_DELAY_SECONDS, Math.ceil(delaySeconds));
}

interface Outgoing {
  readonly body: string;
  /** Names the message in errors: a delivery id and attempt, or an event id. */
  readonly label: string;
  /** The tenant, as MessageGroupId (fair queues); none when the message names no account. */
  readonly group: string | undefined;
}

/** Sends bodies with SendMessageBatch; shared by both adapters. */
class BatchSender {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(messages: readonly Outgoing[], delaySeconds?: number): Promise<void> {
    const delay = sqsDelaySeconds(delaySeconds);
    for (const chunk of chunks(messages)) {
      const entries: SendMessageBatchRequestEntry[] = chunk.map((message, i) => ({
        Id: `m${i}`,
        MessageBody: message.body,
        DelaySeconds: delay,
        ...(message.group ? { MessageGroupId: message.group } : {}),
      }));
      const result = await this.client.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
      const failed = result.Failed ?? [];
      if (failed.length) {
        const named = failed.map((f) => {
          const label = chunk[Number(f.Id?.slice(1))]?.label ?? f.Id;
          return `${label} (${f.Code ?? 'unknown'}${f.SenderFault ? ', sender fault' : ''}: ${f.Message ?? 'no message'})`;
        });
        throw new QueueSendError(
          `SQS refused ${failed.length} of ${chunk.length} messages to ${this.queueUrl}: ${named.join('; ')}`,
          failed,
        );
      }
    }
  }
}

/** Groups messages into requests of at most 10 entries and 256 KiB; one message over the limit is an error. */
function chunks(messages: readonly Outgoing[]): Outgoing[][] {
  const result: Outgoing[][] = [];
  let current: Outgoing[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = Buffer.byteLength(message.body, 'utf8');
    if (size > SQS_MAX_BATCH_BYTES) {
      throw new QueueSendError(`${message.label} is ${size} bytes, over the ${SQS_MAX_BATCH_BYTES}-byte SQS limit`);
    }
    if (current.length === SQS_BATCH_ENTRIES || bytes + size > SQS_MAX_BATCH_BYTES) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length) result.push(current);
  return result;
}

/** The deliveries queue: each job is one attempt of one delivery (DESIGN §1). */
export class SqsDeliveryQueue implements DeliveryQueue {
  private readonly sender: BatchSender;

  constructor(client: SQSClient, queueUrl: string) {
    this.sender = new BatchSender(client, queueUrl);
  }

  send(jobs: readonly DeliveryJob[], delaySeconds?: number): Promise<void> {
    return this.sender.send(
      jobs.map((job) => ({
        body: encodeJob(job),
        label: `${job.deliveryId} attempt ${job.attempt}`,
        group: job.seed?.accountId ?? job.accountId,
      })),
      delaySeconds,
    );
  }
}

/** A queue's messages ready now: GetQueueAttributes ApproximateNumberOfMessages (one request, approximate). */
export class SqsQueueDepth implements QueueDepth {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async ready(): Promise<number> {
    const { Attributes } = await this.client.send(
      new GetQueueAttributesCommand({ QueueUrl: this.queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    const n = Number(Attributes?.ApproximateNumberOfMessages);
    if (!Number.isFinite(n)) throw new Error(`SQS gave no ApproximateNumberOfMessages for ${this.queueUrl}`);
    return n;
  }
}

/** Recovery steps, on the deliveries queue too (the delivery worker runs them). */
export class SqsRecoveryQueue implements RecoveryQueue {
  private readonly sender: BatchSender;

  constructor(client: SQSClient, queueUrl: string) {
    this.sender = new BatchSender(client, queueUrl);
  }

  send(step: RecoveryStep, delaySeconds?: number): Promise<void> {
    return this.sender.send(
      [{ body: encodeStep(step), label: `${step.recoveryId} step ${step.step}`, group: step.accountId }],
      delaySeconds,
    );
  }
}

/** The events queue: each message is one event for the dispatcher to fan out. */
export class SqsEventPublisher implements EventPublisher {
  private readonly sender: BatchSender;

  constructor(client: SQSClient, queueUrl: string) {
    this.sender = new BatchSender(client, queueUrl);
  }

  publish(events: readonly SendflowEvent[], delaySeconds?: number): Promise<void> {
    return this.sender.send(
      events.map((event) => ({ body: encodeEvent(event), label: `event ${event.id}`, group: event.accountId })),
      delaySeconds,
    );
  }
}
