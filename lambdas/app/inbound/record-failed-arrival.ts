// recordFailedArrival: the end of an arrival that could not be stored after the runtime's tries (the local spool
// moves it to the dead letters): each receiving account is shown a `failed` email with what the envelope says,
// announced by email.received, so "accepted" never means "silently lost". A later successful store of the same
// arrival (the operator retried it) replaces it (ReceivedEmailRepository.create).
import { fitReceivedFields } from '../../domain/received-fields';
import type { Tenant } from '../webhooks/ports';
import {
  type InboundDeps,
  type InboundMessage,
  placeOf,
  type ReceiveOutcome,
  receivingAccounts,
  recordReceived,
} from './arrival';
import type { ReceivedEmail, ReceivedNote } from './ports';

/**
 * The end of an arrival that could not be stored after `attempts` tries: for each receiving account, a `failed`
 * email with the envelope only (MAIL FROM, the recipients), its raw bytes kept if the file store takes them, and
 * email.received announcing it. An account for which the arrival was stored meanwhile keeps that email.
 */
export async function recordFailedArrival(
  deps: Omit<InboundDeps, 'parser'>,
  message: InboundMessage,
  attempts: number,
): Promise<ReceiveOutcome> {
  const { byAccount, dropped } = await receivingAccounts(deps, message);
  const stored = [];
  for (const [accountId, receivedFor] of byAccount) {
    const tenant: Tenant = { accountId, mode: 'live' };
    const place = placeOf(deps, message, tenant);
    // Best effort: the bytes may be what could not be stored.
    const rawKept = await deps.files
      .put(place.rawKey, message.raw, { contentType: 'message/rfc822', expiresAt: place.expiresAt })
      .then(
        () => true,
        () => false,
      );
    const { fields, omitted } = fitReceivedFields({
      from: message.mailFrom,
      subject: '',
      messageId: '',
      to: [],
      cc: [],
      bcc: [],
      replyTo: [],
      receivedFor,
      attachments: [],
    });
    const note: ReceivedNote = {
      code: 'storage_failed',
      message:
        `This message arrived but could not be stored (${attempts} tries): only its envelope is listed. ` +
        (rawKept ? 'The raw message is kept. ' : '') +
        'The operator holds the message and can retry it.',
    };
    const email: ReceivedEmail = {
      ...tenant,
      ...place,
      ...fields,
      verdicts: message.verdicts,
      rawSize: message.raw.length,
      sourceId: message.sourceId,
      status: 'failed',
      notes: [note],
      ...(Object.keys(omitted).length ? { omitted } : {}),
    };
    const created = await recordReceived(deps, email);
    stored.push({ accountId, emailId: email.id, created, status: 'failed' as const });
  }
  return { stored, dropped };
}
