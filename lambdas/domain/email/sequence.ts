// An email event's `sequence`: derived from the event itself (its time, its type, its email's id), never counted,
// so it costs no write, has no hot key, and is the same on every redelivery, retry and replay of the event.
import { timeOfId } from '../ids';

/**
 * The order of email event types that share a millisecond: the stage of the email's life each reports (a send
 * before its delivery, a bounce before the failure SES reports with it, a delivery before its open and click).
 * Distinct and under SEQUENCE_STAGES, so two events of one email at one millisecond differ when their types do.
 */
const STAGE: Readonly<Record<string, number>> = {
  'email.scheduled': 0,
  'email.suppressed': 1,
  'email.sent': 2,
  'email.delivery_delayed': 3,
  'email.delivered': 4,
  'email.bounced': 5,
  'email.failed': 6,
  'email.complained': 7,
  'email.opened': 8,
  'email.clicked': 9,
  'email.unsubscribed': 10,
  'email.received': 11,
};
/** Sequence values per millisecond of an email's life. */
export const SEQUENCE_STAGES = 16;

/** When the email was accepted (epoch ms), from its time-ordered id; 0 for an id that carries no time. */
export function emailIdTime(emailId: string): number {
  return timeOfId(emailId, 'email') ?? 0;
}

/**
 * The event's place among its email's events: (milliseconds from the email's acceptance to the event) ×
 * SEQUENCE_STAGES + its type's stage + 1. So it is ≥ 1, grows with the event's time, and orders events of one
 * millisecond by stage; events of one email, type and millisecond (the same step for several recipients) share
 * it: they happened together. Not consecutive: only the order means something. Null for an event that is not
 * about an email (domain, contact, test) or whose time is unreadable.
 */
export function eventSequence(event: {
  readonly type: string;
  readonly timestamp: string;
  readonly emailId?: string;
}): number | null {
  const stage = STAGE[event.type];
  const at = Date.parse(event.timestamp);
  if (stage === undefined || event.emailId === undefined || !Number.isSafeInteger(at)) return null;
  // An event stamped before its email's id by a clock a little behind ours still comes after it.
  const offset = Math.max(0, at - emailIdTime(event.emailId));
  return offset * SEQUENCE_STAGES + stage + 1;
}
