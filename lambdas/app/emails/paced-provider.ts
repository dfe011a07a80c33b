// A provider whose copies keep the sending rate (SendPacer): each copy waits for its turn, then goes to the
// inner provider alone, a few in flight. A copy whose turn would come after the worker's deadline is not sent
// now: `retry`, so the next receive of the sends message sends it.
import type { EmailMessage } from '../../domain/email/email';
import { mapWithLimit } from '../pool';
import type { CopyOutcome, EmailProvider, OutgoingAttachment, OutgoingCopy, SendPacer } from './ports';

/** Copies in flight at once: paced, they start 1/rate apart, so more would only help a provider slower than that. */
export const PACED_IN_FLIGHT = 4;
/** The outcome reason of a copy left for the next receive: its turn came too late for this one. */
export const SEND_RATE_DEFERRED = 'send_rate: no turn before the send deadline';

/**
 * `onTaken` is told each copy the inner provider took (its index in `copies`) as soon as it is taken: paced, a
 * chunk's copies go out over seconds, and a copy's email.sent should not wait for the last of them.
 */
export function pacedProvider(
  inner: EmailProvider,
  pacer: SendPacer,
  notAfter?: number,
  onTaken?: (index: number) => void,
): EmailProvider {
  return {
    send: (
      email: EmailMessage,
      copies: readonly OutgoingCopy[],
      attachments?: readonly OutgoingAttachment[],
    ): Promise<CopyOutcome[]> =>
      mapWithLimit([...copies.entries()], PACED_IN_FLIGHT, async ([index, copy]) => {
        const outcome = await sendOne(inner, pacer, email, copy, notAfter, attachments);
        if (outcome.status === 'sent') onTaken?.(index);
        return outcome;
      }),
  };
}

async function sendOne(
  inner: EmailProvider,
  pacer: SendPacer,
  email: EmailMessage,
  copy: OutgoingCopy,
  notAfter: number | undefined,
  attachments: readonly OutgoingAttachment[] | undefined,
): Promise<CopyOutcome> {
  try {
    if (!(await pacer.take(notAfter))) return { status: 'retry', reason: SEND_RATE_DEFERRED };
    const [outcome] = await inner.send(email, [copy], attachments);
    return outcome ?? { status: 'retry', reason: 'provider_error: no outcome' };
  } catch (error) {
    // As for an unpaced send (send-emails.ts): a provider (or a pacer) that throws took nothing. Each copy has its
    // own outcome, so a failure never turns the copies already taken back into retries.
    return { status: 'retry', reason: `provider_error: ${error instanceof Error ? error.name : 'unknown'}` };
  }
}
