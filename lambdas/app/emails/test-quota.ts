// Test mode is simulated, not free: every recipient of an accepted test-mode email counts against the plan's
// test recipients per day, because each one fans out to the account's webhooks (amplification bound).
import { recipients } from '../../domain/email/email';
import { type QuotaWindow, secondsUntilReset } from '../../domain/email/quota';
import { testQuotaWindow } from '../../domain/email/test-quota';
import { RateLimitedError } from '../../domain/errors';
import { PLANS } from '../../domain/plans';
import type { Clock, Principal, QuotaCounter } from '../ports';
import type { EmailDraft } from './send-emails';

/**
 * Counts the drafts' recipients, all or nothing; past the day's limit, 429 test_quota_exceeded. Returns what
 * it counted, for the caller to give back if the request then fails.
 */
export async function meterTestMode(
  deps: { readonly quotas: QuotaCounter; readonly clock: Clock },
  caller: Principal,
  drafts: readonly EmailDraft[],
): Promise<{ window: QuotaWindow; count: number }> {
  const now = deps.clock.now();
  const window = testQuotaWindow(now);
  const limit = PLANS[caller.plan].testRecipientsPerDay;
  const count = drafts.reduce((sum, draft) => sum + recipients(draft).length, 0);
  if (!(await deps.quotas.consume(caller.accountId, window, count, limit))) {
    throw new RateLimitedError(
      `Test mode allows ${limit} recipients a day (plan ${caller.plan}); this request has ${count}. It resets at midnight UTC.`,
      secondsUntilReset(window, now),
      'test_quota_exceeded',
    );
  }
  return { window, count };
}
