// The admin CLI's handle on a running local runtime's authorizer cache: a POST to the runtime's loopback
// flush endpoint with the per-start token the runtime wrote to its 0600 state file.
import type { AuthorizerCache } from '../../app/ports';

/** Outside the `/v1` stage, so no API route can shadow it. */
export const ADMIN_FLUSH_PATH = '/_sendflow/authorizer-cache/flush';
export const ADMIN_TOKEN_HEADER = 'x-sendflow-admin-token';

export class AuthorizerCacheFlushError extends Error {}

/** `origin`: the runtime's http://host:port. A failed flush throws: the change is stored, the cache is not. */
export function runtimeAuthorizerCache(origin: string, token: string): AuthorizerCache {
  return {
    flush: async () => {
      const res = await fetch(`${origin}${ADMIN_FLUSH_PATH}`, {
        method: 'POST',
        headers: { [ADMIN_TOKEN_HEADER]: token },
        signal: AbortSignal.timeout(5_000),
      }).catch((error: unknown) => {
        throw new AuthorizerCacheFlushError(`could not reach the running runtime at ${origin} to flush its cache`, {
          cause: error,
        });
      });
      if (res.status !== 204)
        throw new AuthorizerCacheFlushError(
          `the running runtime refused the cache flush (HTTP ${res.status}); cached keys expire after SF_AUTH_CACHE_TTL`,
        );
    },
  };
}
