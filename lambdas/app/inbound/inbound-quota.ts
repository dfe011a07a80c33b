// Received bytes are metered on the receiving account: what a received message stores for it (raw message, body,
// attachments) counts toward its plan's daily inbound bytes (PLANS[plan].inboundBytesPerDay), one conditional
// counter write per message and account, as the email quotas. Past it, the message is not stored for that account.
import { byteQuotaWindow } from '../../domain/email/byte-quota';
import type { QuotaWindow } from '../../domain/email/quota';
import { PLANS } from '../../domain/plans';
import type { AccountRepository, QuotaCounter } from '../ports';

export interface InboundQuotaDeps {
  readonly quotas: QuotaCounter;
  /** The receiving account's plan (one GetItem per message and account). */
  readonly accounts: Pick<AccountRepository, 'get'>;
}

/** Why a message was not stored for an account. */
export const INBOUND_QUOTA_EXCEEDED = 'inbound_bytes_quota_exceeded';

/**
 * Counts `bytes` on the account's day: the window to give them back in if storing then fails, or null when the
 * account's day has no room for them (nothing counted). An account that no longer exists counts on the free plan.
 */
export async function meterInboundBytes(
  deps: InboundQuotaDeps,
  accountId: string,
  bytes: number,
  nowMs: number,
): Promise<QuotaWindow | null> {
  const plan = (await deps.accounts.get(accountId))?.plan ?? 'free';
  const window = byteQuotaWindow('inbound', nowMs);
  return (await deps.quotas.consume(accountId, window, bytes, PLANS[plan].inboundBytesPerDay)) ? window : null;
}
