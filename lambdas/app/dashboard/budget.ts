// Use case: count one dashboard page or action against its account's dashboard window (not the API's).
import { DASHBOARD_REQUESTS_PER_SECOND, dashboardSubject } from '../../domain/dashboard/session';
import type { RateDecision } from '../../domain/rate-limit';
import { consumeRequest, type RateLimitDeps } from '../rate-limit';

export function consumeDashboardRequest(deps: RateLimitDeps, accountId: string): Promise<RateDecision> {
  return consumeRequest(deps, dashboardSubject(accountId), DASHBOARD_REQUESTS_PER_SECOND);
}
