// SQS handler of the sends queue: each record is an accepted email whose time has come ({emailId}): now for
// ordinary sends, scheduled_at for scheduled ones. A record whose recipients are not all settled (throttling,
// an outage, time running out) fails alone, so SQS receives it again after the visibility time-out; each receive
// after the first puts the email in the schedule index first (sendQueuedEmail's redelivered).
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { type SendEmailDeps, sendQueuedEmail } from '../../app/emails/send-emails';

/** `accountId` names the tenant for fair dequeueing (SQS fair queues' MessageGroupId; the local queue's groups). */
export const sendMessage = z.object({ emailId: z.string().min(1), accountId: z.string().optional() });
export const encodeSend = (emailId: string, accountId?: string): string =>
  JSON.stringify(accountId === undefined ? { emailId } : { emailId, accountId });

/** A sends message's fields, or undefined when it is not one (the local queue's groups and dedupe keys). */
export function decodeSend(body: string): { emailId: string; accountId?: string } | undefined {
  try {
    return sendMessage.parse(JSON.parse(body));
  } catch {
    return undefined;
  }
}

/**
 * Time kept back from the function's time-out (at most half of what is left): no recipient is claimed after
 * that, so Lambda never stops the worker between a provider call and its record (one chunk of SendEmail calls
 * with their backoff fits in it).
 */
export const SEND_DEADLINE_MARGIN_MS = 15_000;

export function createSendWorkerHandler(deps: SendEmailDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  return (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    const remaining = context?.getRemainingTimeInMillis();
    const deadline =
      remaining === undefined
        ? undefined
        : deps.clock.now() + remaining - Math.min(SEND_DEADLINE_MARGIN_MS, remaining / 2);
    const record = async (message: SQSRecord) =>
      sendQueuedEmail(deps, sendMessage.parse(JSON.parse(message.body)).emailId, {
        ...(deadline ? { deadline } : {}),
        redelivered: Number(message.attributes?.ApproximateReceiveCount ?? 1) > 1,
      });
    return processPartialResponse(event, record, processor, { throwOnFullBatchFailure: false });
  };
}
