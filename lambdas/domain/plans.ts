// Plan tiers and their limits (spec §8: requests per second, emails per calendar month), and the per-account
// limits that bound how much outbound traffic one account can cause (docs/sending.md, "Limits").

export const PLAN_NAMES = ['free', 'starter', 'growth', 'scale'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface Plan {
  readonly name: PlanName;
  /** Requests per second, the rate-limit window size (X-RateLimit-Limit). */
  readonly requestsPerSecond: number;
  /** Burst allowance of the API Gateway usage plan (the outer, best-effort shield). */
  readonly burst: number;
  readonly emailsPerMonth: number;
  /** Domains per account and mode: each is a provider identity (SES allows 10,000 per region), re-checked. */
  readonly domainsPerMode: number;
  /**
   * Test-mode recipients per UTC day (every to, cc and bcc of every accepted email): the simulator sends
   * nothing real, but each recipient fans out to every subscribed webhook, so test mode is metered too.
   */
  readonly testRecipientsPerDay: number;
  /**
   * Listen-session polls (`npm run listen`) of the account open at once, both modes: each waiting poll is held
   * by the runtime, so they are capped apart from the request rate (one CLI keeps one poll open per session).
   */
  readonly listenPolls: number;
  /**
   * Attachment bytes stored per UTC day (both modes): what one account may add to the file store (S3 on AWS, the
   * disk locally) in a day, kept for the retention (a day in test mode).
   */
  readonly attachmentBytesPerDay: number;
  /** Received bytes stored per UTC day for an account that receives mail (raw message, body and attachments). */
  readonly inboundBytesPerDay: number;
}

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/**
 * Webhooks per account and mode, on every plan: with one recipient's few events each, it caps the POSTs one
 * recipient causes (peers: PayPal 10 per app, YCloud 20, Brevo 40 per account).
 */
export const WEBHOOKS_PER_MODE = 10;

export const PLANS: Readonly<Record<PlanName, Plan>> = {
  free: {
    name: 'free',
    requestsPerSecond: 10,
    burst: 20,
    emailsPerMonth: 3_000,
    domainsPerMode: 3,
    testRecipientsPerDay: 1_000,
    listenPolls: 2,
    attachmentBytesPerDay: 256 * MiB,
    inboundBytesPerDay: 256 * MiB,
  },
  starter: {
    name: 'starter',
    requestsPerSecond: 50,
    burst: 100,
    emailsPerMonth: 10_000,
    domainsPerMode: 10,
    testRecipientsPerDay: 10_000,
    listenPolls: 3,
    attachmentBytesPerDay: 2 * GiB,
    inboundBytesPerDay: 1 * GiB,
  },
  growth: {
    name: 'growth',
    requestsPerSecond: 100,
    burst: 200,
    emailsPerMonth: 50_000,
    domainsPerMode: 50,
    testRecipientsPerDay: 50_000,
    listenPolls: 5,
    attachmentBytesPerDay: 10 * GiB,
    inboundBytesPerDay: 5 * GiB,
  },
  scale: {
    name: 'scale',
    requestsPerSecond: 500,
    burst: 1_000,
    emailsPerMonth: 200_000,
    domainsPerMode: 200,
    testRecipientsPerDay: 200_000,
    listenPolls: 5,
    attachmentBytesPerDay: 50 * GiB,
    inboundBytesPerDay: 20 * GiB,
  },
};

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}
