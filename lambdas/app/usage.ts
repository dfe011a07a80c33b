// Use case: an account's usage against its plan: the request rate, the live emails of this calendar month
// (spec §8), the test-mode recipients of this UTC day, and the bytes of attachments and received mail stored
// today (docs/sending.md, "Limits"). Read only.
import { byteQuotaDay, byteQuotaWindow } from '../domain/email/byte-quota';
import { quotaWindow } from '../domain/email/quota';
import { testQuotaWindow } from '../domain/email/test-quota';
import { PLANS, type PlanName } from '../domain/plans';
import type { Clock, Principal, QuotaCounter } from './ports';

export interface UsageDeps {
  readonly quotas: QuotaCounter;
  readonly clock: Clock;
}

export interface QuotaUsage {
  /** `YYYY-MM` for the monthly quota, `YYYY-MM-DD` for the test-mode day. */
  readonly period: string;
  readonly used: number;
  readonly limit: number;
  /** Epoch ms when the count starts again. */
  readonly resetsAt: number;
}

export interface Usage {
  readonly plan: PlanName;
  readonly requestsPerSecond: number;
  readonly liveEmails: QuotaUsage;
  readonly testRecipients: QuotaUsage;
  /** Attachment bytes stored today (both modes). */
  readonly attachmentBytes: QuotaUsage;
  /** Received bytes stored today for the account. */
  readonly inboundBytes: QuotaUsage;
}

export async function readUsage(deps: UsageDeps, caller: Principal): Promise<Usage> {
  const now = deps.clock.now();
  const plan = PLANS[caller.plan];
  const month = quotaWindow(now);
  const day = testQuotaWindow(now);
  const attachments = byteQuotaWindow('attachments', now);
  const inbound = byteQuotaWindow('inbound', now);
  const [live, test, attachmentBytes, inboundBytes] = await Promise.all([
    deps.quotas.used(caller.accountId, month),
    deps.quotas.used(caller.accountId, day),
    deps.quotas.used(caller.accountId, attachments),
    deps.quotas.used(caller.accountId, inbound),
  ]);
  return {
    plan: plan.name,
    requestsPerSecond: plan.requestsPerSecond,
    liveEmails: { period: month.month, used: live, limit: plan.emailsPerMonth, resetsAt: month.resetsAt * 1000 },
    testRecipients: {
      period: day.month.replace(/^test#/, ''),
      used: test,
      limit: plan.testRecipientsPerDay,
      resetsAt: day.resetsAt * 1000,
    },
    attachmentBytes: {
      period: byteQuotaDay(attachments),
      used: attachmentBytes,
      limit: plan.attachmentBytesPerDay,
      resetsAt: attachments.resetsAt * 1000,
    },
    inboundBytes: {
      period: byteQuotaDay(inbound),
      used: inboundBytes,
      limit: plan.inboundBytesPerDay,
      resetsAt: inbound.resetsAt * 1000,
    },
  };
}
