// SQS handler of the sends queue: each record is an accepted email whose time has come ({emailId}): now for
// ordinary sends, scheduled_at for scheduled ones.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { type SendEmailDeps, sendQueuedEmail } from '../../app/emails/send-emails';

export const sendMessage = z.object({ emailId: z.string().min(1) });
export const encodeSend = (emailId: string): string => JSON.stringify({ emailId });

export function createSendWorkerHandler(deps: SendEmailDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  const record = async (message: SQSRecord) =>
    sendQueuedEmail(deps, sendMessage.parse(JSON.parse(message.body)).emailId);
  return (event: SQSEvent) => processPartialResponse(event, record, processor, { throwOnFullBatchFailure: false });
}
