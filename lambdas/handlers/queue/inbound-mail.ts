// Handler of the inbound function (AWS): SES's receipt rule stores each message in the inbound bucket, then
// invokes this function asynchronously with the Lambda-action event (headers and verdicts, no body). The event is
// checked at the boundary, the stored message read by its SES messageId and handed to `receive` (receiveEmail,
// idempotent on the messageId). Anything that fails is thrown: Lambda retries the event, then sends it to the
// on-failure queue, whose alarm pages; the message itself stays in the bucket to be replayed (docs/runbook.md).
// An arrival that no account received (every recipient dropped) is deleted once receive has said so.
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import { type RawMessageSource, SES_MESSAGE_ID } from '../../app/inbound/raw-messages';
import type { InboundMessage, Verdict } from '../../app/inbound/receive-email';

/**
 * One verdict as SES writes it. DISABLED (a check the rule did not run) and an absent verdict are `gray`: SES's
 * own word for "neither passed nor failed", which a reader must not take for a pass.
 */
const verdict = z
  .object({ status: z.enum(['PASS', 'FAIL', 'GRAY', 'PROCESSING_FAILED', 'DISABLED']) })
  .optional()
  .transform((v): Verdict => (!v || v.status === 'DISABLED' ? 'gray' : (v.status.toLowerCase() as Verdict)));

/** SES's Lambda-action event (docs: "Lambda action event"): only the fields this function reads. */
const sesReceiptEvent = z.object({
  Records: z
    .array(
      z.object({
        eventSource: z.literal('aws:ses'),
        ses: z.object({
          mail: z.object({ messageId: z.string().regex(SES_MESSAGE_ID), source: z.string().max(1024) }),
          receipt: z.object({
            timestamp: z.iso.datetime({ offset: true }),
            // This rule's envelope recipients; bounded against a malformed event, far above one SMTP transaction's.
            recipients: z.array(z.string().min(3).max(320).includes('@')).min(1).max(1000),
            spamVerdict: verdict,
            virusVerdict: verdict,
            spfVerdict: verdict,
            dkimVerdict: verdict,
            dmarcVerdict: verdict,
          }),
        }),
      }),
    )
    .min(1),
});
type SesReceiptRecord = z.infer<typeof sesReceiptEvent>['Records'][number];

export interface InboundMailDeps {
  readonly source: RawMessageSource;
  /** receiveEmail (lambdas/app/inbound/receive-email.ts) with its deps bound, wired by the runtime. */
  readonly receive: (message: InboundMessage) => Promise<{ readonly stored: readonly { readonly status: string }[] }>;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
}

export function createInboundMailHandler(deps: InboundMailDeps) {
  return async (event: unknown): Promise<void> => {
    // SES sends one record per invocation; each is handled in turn should it ever send more.
    for (const record of sesReceiptEvent.parse(event).Records) {
      const raw = await deps.source.read(record.ses.mail.messageId);
      const message = inboundMessage(record, raw);
      const { stored } = await deps.receive(message);
      // Nobody receives it: no reason to keep someone's mail for the whole retention. Only after receive
      // succeeded (a failure leaves it for the retries and a replay); a stored arrival stays for the same reason.
      const discarded = stored.length === 0;
      if (discarded) await deps.source.discard(message.sourceId);
      // Ids and counts only: addresses and subjects are customer data, which logs keep longer than the retention.
      deps.logger.info('Inbound message received', {
        sesMessageId: message.sourceId,
        recipients: message.recipients.length,
        bytes: raw.byteLength,
        stored: stored.length,
        // Stored with part of it only in the raw message (a MIME limit, the parse time-box): someone's hostile mail.
        partial: stored.filter((one) => one.status === 'partial').length,
        discarded,
      });
    }
  };
}

/** The contract's InboundMessage from one SES record and the bytes SES stored. */
export function inboundMessage(record: SesReceiptRecord, raw: Uint8Array): InboundMessage {
  const { mail, receipt } = record.ses;
  return {
    raw,
    // A bounce's null reverse-path reaches SES as an empty MAIL FROM; some paths write it as `<>`.
    mailFrom: mail.source === '<>' ? '' : mail.source,
    recipients: receipt.recipients.map(lowerCaseDomain),
    verdicts: {
      spam: receipt.spamVerdict,
      virus: receipt.virusVerdict,
      spf: receipt.spfVerdict,
      dkim: receipt.dkimVerdict,
      dmarc: receipt.dmarcVerdict,
    },
    receivedAt: new Date(receipt.timestamp).toISOString(),
    sourceId: mail.messageId,
  };
}

/** Domains are case-insensitive, local parts are not (RFC 5321 §2.4): only the part after the last @ is folded. */
function lowerCaseDomain(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
}
