// zod at the queue boundary: the bodies of events-queue and deliveries-queue messages (and of the retry
// schedules' SQS input, which is the same delivery job).
import * as z from 'zod';
import type { DeliveryJob, RecoveryStep } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import type { SendflowEvent } from '../../domain/events';
import { EVENT_TYPES, TEST_EVENT } from '../../domain/events';
import { FORMATS } from '../../domain/webhooks/format';

export const eventMessage: z.ZodType<SendflowEvent> = z.object({
  id: z.string().min(1),
  type: z.enum([...EVENT_TYPES, TEST_EVENT]),
  accountId: z.string().min(1),
  mode: z.enum(MODES),
  timestamp: z.string(),
  emailId: z.string().optional(),
  to: z.string().optional(),
  data: z.record(z.string(), z.unknown()),
  // Since webhook filters (issue 32): an email event's tags. The release before drops it (z.object strips it).
  tags: z.record(z.string(), z.string()).optional(),
  // Since traces (issue 32): the compact trace context. The release before drops it (z.object strips it).
  trace: z.string().optional(),
});

export const deliveryJobMessage: z.ZodType<DeliveryJob> = z.object({
  deliveryId: z.string().min(1),
  webhookId: z.string().min(1),
  attempt: z.number().int().min(1),
  eventAt: z.number().optional(),
  accountId: z.string().min(1).optional(),
  ratePerSecond: z.number().int().min(1).optional(),
  paceTurn: z.number().optional(),
  seed: z
    .object({
      accountId: z.string(),
      mode: z.enum(MODES),
      eventId: z.string(),
      event: z.string(),
      format: z.enum(FORMATS),
      payload: z.string(),
      createdAt: z.number(),
      emailId: z.string().optional(),
      sequence: z.number().int().min(1).optional(),
      // Since traces (issue 32); the release before strips it.
      trace: z.string().optional(),
    })
    .optional(),
});

/** A recovery job's step, on the deliveries queue next to the delivery jobs: `{"recovery": {…}}`. */
export const recoveryStepMessage = z.object({
  recovery: z.object({
    accountId: z.string().min(1),
    mode: z.enum(MODES),
    webhookId: z.string().min(1),
    recoveryId: z.string().min(1),
    step: z.number().int().min(0),
  }),
});

export const encodeJob = (job: DeliveryJob): string => JSON.stringify(job);
export const encodeStep = (step: RecoveryStep): string => JSON.stringify({ recovery: step });
export const encodeEvent = (event: SendflowEvent): string => JSON.stringify(event);

/** A delivery job's or recovery step's account (its tenant, for fair dequeueing); undefined when it names none. */
export function deliveryMessageAccount(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const step = recoveryStepMessage.safeParse(parsed);
    if (step.success) return step.data.recovery.accountId;
    const job = deliveryJobMessage.safeParse(parsed);
    return job.success ? (job.data.seed?.accountId ?? job.data.accountId) : undefined;
  } catch {
    return undefined;
  }
}

/** An events-queue message's account (its tenant, for fair dequeueing); undefined when it is not an event. */
export function eventMessageAccount(body: string): string | undefined {
  try {
    const event = eventMessage.safeParse(JSON.parse(body));
    return event.success ? event.data.accountId : undefined;
  } catch {
    return undefined;
  }
}
