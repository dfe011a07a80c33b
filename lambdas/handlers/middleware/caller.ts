// Resolves route and caller. On AWS the authorizer has already authenticated matched routes (its context
// is in the event). Without that context (the gateway's catch-all, or the local gateway forwarding a
// denied request) we authenticate here, to charge the right rate-limit window and to say why it failed.
import { type AuthenticateDeps, authenticate } from '../../app/authenticate';
import { UnauthorizedError } from '../../domain/errors';
import { fromAuthorizerContext } from '../authorizer-context';
import type { ApiMiddleware } from '../http/context';
import { routeFor } from '../http/routing';

export function resolveCaller(deps: AuthenticateDeps): ApiMiddleware {
  return {
    before: async (request) => {
      const { event } = request;
      const route = routeFor(event.httpMethod, event.resource);
      let principal = fromAuthorizerContext(event.requestContext.authorizer);
      let authError: UnauthorizedError | undefined;
      if (!principal && route?.access !== 'public') {
        try {
          principal = await authenticate(deps, headerValue(event.headers, 'authorization'));
        } catch (error) {
          if (!(error instanceof UnauthorizedError)) throw error;
          authError = error;
        }
      }
      request.context.sendflow = {
        ...(route ? { route } : {}),
        ...(authError ? { authError } : {}),
        principal,
        clientIp: event.requestContext.identity?.sourceIp ?? 'unknown',
      };
    },
  };
}

/** Case-insensitive header lookup (API Gateway keeps the client's casing). */
export function headerValue(headers: Record<string, string | undefined> | null, name: string): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}
