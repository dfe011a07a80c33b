// Counts every request against its window and stamps X-RateLimit-* on every response, errors included.
import { consumeRequest, type RateLimitDeps } from '../../app/rate-limit';
import { RateLimitedError } from '../../domain/errors';
import { PLANS } from '../../domain/plans';
import { rateLimitHeaders } from '../../domain/rate-limit';
import type { ApiMiddleware } from '../http/context';

export function rateLimit(deps: RateLimitDeps & { ipLimit: number }): ApiMiddleware {
  const stamp: NonNullable<ApiMiddleware['after']> = (request) => {
    const decision = request.context.sendflow?.decision;
    if (!decision || !request.response) return;
    request.response.headers = { ...request.response.headers, ...rateLimitHeaders(decision) };
  };
  return {
    before: async (request) => {
      const state = request.context.sendflow;
      const { subject, limit } = state.principal
        ? { subject: `account:${state.principal.accountId}`, limit: PLANS[state.principal.plan].requestsPerSecond }
        : { subject: `ip:${state.clientIp}`, limit: deps.ipLimit };
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
