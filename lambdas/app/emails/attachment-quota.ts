// Attachment bytes are metered: every byte a request stores as attachments counts toward the account's daily
// quota (PLANS[plan].attachmentBytesPerDay, both modes), with one conditional counter write, as the email quotas.
import { byteQuotaWindow, formatBytes } from '../../domain/email/byte-quota';
import { type QuotaWindow, secondsUntilReset } from '../../domain/email/quota';
import { RateLimitedError } from '../../domain/errors';
import { PLANS } from '../../domain/plans';
import type { Clock, Principal, QuotaCounter } from '../ports';

export interface AttachmentQuotaDeps {
  readonly quotas: QuotaCounter;
  readonly clock: Clock;
}

/** What a request counted, for the caller to give back if it then fails. */
export interface CountedBytes {
  readonly window: QuotaWindow;
  readonly count: number;
}

/**
 * Before a `path` is fetched: refuses at once (one read of the counter) when the day's quota is used up, so a
 * request that cannot be stored never downloads its files.
 */
export async function assertAttachmentRoom(deps: AttachmentQuotaDeps, caller: Principal): Promise<void> {
  const now = deps.clock.now();
  const window = byteQuotaWindow('attachments', now);
  const limit = PLANS[caller.plan].attachmentBytesPerDay;
  if ((await deps.quotas.used(caller.accountId, window)) >= limit) throw refusal(caller, limit, 0, window, now);
}

/** Counts `bytes` against the day, all or nothing; past the quota, 429 attachment_bytes_quota_exceeded. */
export async function meterAttachmentBytes(
  deps: AttachmentQuotaDeps,
  caller: Principal,
  bytes: number,
): Promise<CountedBytes> {
  const now = deps.clock.now();
  const window = byteQuotaWindow('attachments', now);
  const limit = PLANS[caller.plan].attachmentBytesPerDay;
  if (!(await deps.quotas.consume(caller.accountId, window, bytes, limit))) {
    throw refusal(caller, limit, bytes, window, now);
  }
  return { window, count: bytes };
}

function refusal(caller: Principal, limit: number, bytes: number, window: QuotaWindow, now: number) {
  const request = bytes > 0 ? `; this request's ${bytes} bytes would pass it` : ', and it is used up';
  return new RateLimitedError(
    `An account stores at most ${limit} bytes of attachments a day (plan ${caller.plan}: ${formatBytes(limit)}, test and live mode together)${request}. It resets at midnight UTC.`,
    secondsUntilReset(window, now),
    'attachment_bytes_quota_exceeded',
  );
}
