// HTTP handler for GET /v1/usage: the account's plan, rate limit and quotas used (the dashboard's overview).
import { readUsage, type UsageDeps } from '../../app/usage';
import type { RouteHandler } from './context';
import { json } from './response';

export function usageHandlers(deps: UsageDeps) {
  const get: RouteHandler = async ({ caller }) => {
    const usage = await readUsage(deps, caller);
    const quota = (q: typeof usage.liveEmails) => ({
      period: q.period,
      used: q.used,
      limit: q.limit,
      resets_at: new Date(q.resetsAt).toISOString(),
    });
    return json(200, {
      object: 'usage',
      plan: usage.plan,
      rate_limit: { requests_per_second: usage.requestsPerSecond },
      live_emails_this_month: quota(usage.liveEmails),
      test_recipients_today: quota(usage.testRecipients),
    });
  };
  return { getUsage: get };
}
