// Counts every request against its window and stamps X-RateLimit-* on every response, errors included.
import { consumeRequest, type RateLimitDeps } from '../../app/rate-limit';
import { RateLimitedError } from '../../domain/errors';
import { PLANS } from '../../domain/plans';
import { rateLimitHeaders } from '../../domain/rate-limit';
import type { ApiMiddleware, RequestState } from '../http/context';

/**
 * Public link routes (one-click unsubscribe, confirmations) are posted by mailbox providers from a few IPs
 * for many recipients; their tokens are signed, so guessing is pointless. They get their own, wider window.
 */
export const PUBLIC_ROUTE_IP_FACTOR = 10;

/** Which window a request counts against, and its size. */
function windowOf(state: RequestState, ipLimit: number): { subject: string; limit: number } {
  if (state.principal) {
    return { subject: `account:${state.principal.accountId}`, limit: PLANS[state.principal.plan].requestsPerSecond };
  }
  if (state.route?.access === 'public')
    return { subject: `public-ip:${state.clientIp}`, limit: ipLimit * PUBLIC_ROUTE_IP_FACTOR };
  return { subject: `ip:${state.clientIp}`, limit: ipLimit };
}

export function rateLimit(deps: RateLimitDeps & { ipLimit: number }): ApiMiddleware {
  const stamp: NonNullable<ApiMiddleware['after']> = (request) => {
    const decision = request.context.sendflow?.decision;
    if (!decision || !request.response) return;
    request.response.headers = { ...request.response.headers, ...rateLimitHeaders(decision) };
  };
  return {
    before: async (request) => {
      const state = request.context.sendflow;
      const { subject, limit } = windowOf(state, deps.ipLimit);
      state.decision = await consumeRequest(deps, subject, limit);
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
