// Plan tiers and their limits (spec §8): requests per second and emails per calendar month.

export const PLAN_NAMES = ['free', 'starter', 'growth', 'scale'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface Plan {
  readonly name: PlanName;
  /** Requests per second, the rate-limit window size (X-RateLimit-Limit). */
  readonly requestsPerSecond: number;
  /** Burst allowance of the API Gateway usage plan (the outer, best-effort shield). */
  readonly burst: number;
  readonly emailsPerMonth: number;
}

export const PLANS: Readonly<Record<PlanName, Plan>> = {
  free: { name: 'free', requestsPerSecond: 10, burst: 20, emailsPerMonth: 3_000 },
  starter: { name: 'starter', requestsPerSecond: 50, burst: 100, emailsPerMonth: 10_000 },
  growth: { name: 'growth', requestsPerSecond: 100, burst: 200, emailsPerMonth: 50_000 },
  scale: { name: 'scale', requestsPerSecond: 500, burst: 1_000, emailsPerMonth: 200_000 },
};

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}
