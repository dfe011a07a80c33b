// Usage plans where there is no API Gateway: the local runtime's limiter (DynamoDB window) is the only one,
// so an account needs no usage identity.
import type { AuthorizerCache, UsagePlans } from '../../app/ports';

export const noUsagePlans: UsagePlans = {
  enroll: async () => ({}),
  move: async () => {},
};

/**
 * The admin CLI's view of the authorizer cache when no runtime runs on the store it works on: nothing to
 * flush (a running one is flushed through runtime-authorizer-cache.ts).
 */
export const outOfProcessAuthorizerCache: AuthorizerCache = { flush: async () => {} };
