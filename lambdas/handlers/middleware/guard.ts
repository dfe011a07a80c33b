// Route and scope guard: 404 for unknown paths, 405 for known paths with another method, 401 without a
// caller, 403 when the key lacks the route's scope (spec §5.6, DESIGN §3 table).
import { InsufficientScopeError, MethodNotAllowedError, NotFoundError, UnauthorizedError } from '../../domain/errors';
import { allows, describeAccess } from '../../domain/scopes';
import type { ApiMiddleware } from '../http/context';
import { methodsOn } from '../http/routing';

export function guard(): ApiMiddleware {
  return {
    before: (request) => {
      const { route, principal, authError } = request.context.sendflow;
      const { event } = request;
      if (!route) {
        const allow = methodsOn(event.resource);
        if (allow.length)
          throw new MethodNotAllowedError(
            `Method ${event.httpMethod} is not allowed on ${event.requestContext.path}.`,
            allow,
          );
        throw new NotFoundError(`No route ${event.httpMethod} ${event.requestContext.path}.`);
      }
      if (route.access === 'public') return;
      if (!principal) throw authError ?? new UnauthorizedError('Missing or invalid API key.');
      if (!allows(route.access, principal.scopes)) {
        throw new InsufficientScopeError(
          `This API key lacks the access this route needs: ${describeAccess(route.access)}.`,
        );
      }
    },
  };
}
