// Usage plans where there is no API Gateway: the local runtime's limiter (DynamoDB window) is the only one,
// so an account needs no usage identity.
import type { AuthorizerCache, UsagePlans } from '../../app/ports';

export const noUsagePlans: UsagePlans = {
  enroll: async () => ({}),
  move: async () => {},
};

/**
 * The admin CLI's view of the local runtime's authorizer cache: it lives in the runtime's process, where
 * SF_AUTH_CACHE_TTL defaults to 0 (nothing cached). With a TTL set, admin changes apply as entries expire.
 */
export const outOfProcessAuthorizerCache: AuthorizerCache = { flush: async () => {} };
