// SQS handler of the sends queue: each record is an accepted email whose time has come ({emailId}): now for
// ordinary sends, scheduled_at for scheduled ones, a batch of them sent one after another. A record whose
// recipients are not all settled (throttling, an outage, time running out mid-email) fails alone, so SQS receives
// it again after the visibility time-out; each receive after the first puts the email in the schedule index first
// (sendQueuedEmail's redelivered). A record the invocation has no time left to start is handed back to the queue.
// The copies the batch sends are counted toward their tenants' reputation together, when the batch is over
// (app/reputation/sent-tally).
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { type SendEmailDeps, sendQueuedEmail } from '../../app/emails/send-emails';
import type { SentTally } from '../../app/reputation/sent-tally';

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

export interface SendWorkerDeps extends SendEmailDeps {
  /**
   * The longest one email's copies may take at this invocation's pace (EMAIL_LIMITS.recipients at its share of
   * the SES rate); absent when unpaced. An email after the batch's first starts only with that much time left.
   */
  readonly pacedEmailMs?: number;
  /** A new tally of sent copies for each batch (written when the batch is over); absent: nothing is counted. */
  readonly sentTally?: () => SentTally;
}

export function createSendWorkerHandler(deps: SendWorkerDeps) {
  return (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    // One processor per invocation: it holds the batch's records, handler and outcomes, and the local runtime runs
    // a queue's batches at once in one process (a shared one would run one batch's records with another's handler).
    const processor = new BatchProcessor(EventType.SQS);
    const remaining = context?.getRemainingTimeInMillis();
    const deadline =
      remaining === undefined
        ? undefined
        : deps.clock.now() + remaining - Math.min(SEND_DEADLINE_MARGIN_MS, remaining / 2);
    let started = 0;
    const tally = deps.sentTally?.();
    const sendDeps: SendEmailDeps = tally ? { ...deps, sentCopies: tally } : deps;
    const record = async (message: SQSRecord) => {
      const { emailId, accountId } = sendMessage.parse(JSON.parse(message.body));
      // No time left to start it (after the first, the time a paced email may take, all its copies at this
      // invocation's pace): handed back at once as a new message (this one is then deleted), rather than failed,
      // which would hold it for the 6-minute visibility time-out and count a receive against it.
      const now = deps.clock.now();
      if (deadline !== undefined && (now >= deadline || (started > 0 && now + (deps.pacedEmailMs ?? 0) > deadline))) {
        await deps.sendScheduler.schedule(emailId, now, accountId);
        return 'handed back';
      }
      started += 1;
      return sendQueuedEmail(sendDeps, emailId, {
        ...(deadline ? { deadline } : {}),
        redelivered: Number(message.attributes?.ApproximateReceiveCount ?? 1) > 1,
      });
    };
    // One email after another (not Powertools' parallel default): a live invocation's copies share its pace (its
    // share of the SES account's rate), and an email it cannot start in time is handed back, not begun.
    const processed = processPartialResponse(event, record, processor, {
      throwOnFullBatchFailure: false,
      processInParallel: false,
    });
    // The batch's counts are written before the invocation ends (a write that fails is reported by the tally).
    return tally ? processed.finally(() => tally.flush()) : processed;
  };
}
