// Counts every request against its window and stamps X-RateLimit-* on every response, errors included.
// Callers with a valid key count in their account's DynamoDB window; everyone else in a per-IP window kept in
// memory, so anonymous traffic (an unknown, malformed or missing key) never reaches a DynamoDB write. The
// dashboard's in-process calls count in neither: the dashboard counts its own pages (dashboard.ts).

import type { RateLimitCounter } from '../../app/ports';
import { ClosedWindows, consumeRequest, type RateLimitDeps } from '../../app/rate-limit';
import { isSessionKeyId } from '../../domain/dashboard/session';
import { RateLimitedError } from '../../domain/errors';
import { PLANS } from '../../domain/plans';
import { rateLimitHeaders } from '../../domain/rate-limit';
import type { ApiMiddleware, RequestState } from '../http/context';

/**
 * Public link routes (one-click unsubscribe, confirmations) are posted by mailbox providers from a few IPs
 * for many recipients; their tokens are signed, so guessing is pointless. They get their own, wider window.
 */
export const PUBLIC_ROUTE_IP_FACTOR = 10;

/** Which window a request counts against, its size, and whether it is an account's (stored) window. */
function windowOf(state: RequestState, ipLimit: number): { subject: string; limit: number; anonymous: boolean } {
  if (state.principal) {
    const limit = PLANS[state.principal.plan].requestsPerSecond;
    return { subject: `account:${state.principal.accountId}`, limit, anonymous: false };
  }
  if (state.route?.access === 'public')
    return { subject: `public-ip:${state.clientIp}`, limit: ipLimit * PUBLIC_ROUTE_IP_FACTOR, anonymous: true };
  return { subject: `ip:${state.clientIp}`, limit: ipLimit, anonymous: true };
}

/**
 * `counter`: the accounts' windows (DynamoDB, shared by every container). `anonymousCounter`: the per-IP
 * windows of requests without a valid key, in memory: exact in the one-process local runtime; on AWS the
 * WAF's rate-based rules are the limit (DESIGN §3) and a container's own count never exceeds theirs.
 */
export function rateLimit(
  deps: RateLimitDeps & { anonymousCounter: RateLimitCounter; ipLimit: number },
): ApiMiddleware {
  // This container's knowledge of the accounts' windows already over their limit (never stale: counts only grow).
  const closed = new ClosedWindows();
  const stamp: NonNullable<ApiMiddleware['after']> = (request) => {
    const decision = request.context.sendflow?.decision;
    if (!decision || !request.response) return;
    request.response.headers = { ...request.response.headers, ...rateLimitHeaders(decision) };
  };
  return {
    before: async (request) => {
      const state = request.context.sendflow;
      // A dashboard page's API call: its page was counted in the dashboard's own window, not the keys' one.
      if (state.principal && isSessionKeyId(state.principal.keyId)) return;
      const { subject, limit, anonymous } = windowOf(state, deps.ipLimit);
      const counting = anonymous
        ? { counter: deps.anonymousCounter, clock: deps.clock }
        : { counter: deps.counter, clock: deps.clock, closed };
      state.decision = await consumeRequest(counting, subject, limit);
      if (state.decision.limited) {
        throw new RateLimitedError(
          `Rate limit of ${limit} requests per second exceeded; retry after ${state.decision.retryAfter} s.`,
          state.decision.retryAfter,
        );
      }
    },
    after: stamp,
    onError: stamp,
  };
}
