// Route and scope guard: 404 for unknown paths, 405 for known paths with another method, 401 without a
// caller, 403 when the key lacks the route's scope (spec §5.6, DESIGN §3 table).
import { InsufficientScopeError, MethodNotAllowedError, NotFoundError, UnauthorizedError } from '../../domain/errors';
import { allows, describeAccess } from '../../domain/scopes';
import { STAGE } from '../../manifest';
import type { ApiMiddleware } from '../http/context';
import { matchPath, methodsOn } from '../http/routing';

const MAX_ID_LENGTH = 128;
const MAX_TOKEN_LENGTH = 2200;
/** A dashboard path below /dashboard/ (a few ids deep). */
const MAX_PROXY_LENGTH = 512;
/**
 * Resend's paths that Sendflow does not serve and that its `{id}` resources would take for an id (on AWS the
 * gateway matches them so too): they answer as the unknown routes they are, not "No email with id metrics."
 */
const RESEND_PATHS_NOT_SERVED: ReadonlySet<string> = new Set(['/contacts/{id} imports']);
/** A suppression's id or address (up to 254 characters; its id is longer), percent-encoded at worst. */
const MAX_ADDRESS_PARAM_LENGTH = 1024;

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
        throw noRoute(event.httpMethod, event.requestContext.path);
      }
      // Ids are short; only signed link tokens are long. Anything longer cannot exist (and would exceed
      // DynamoDB's key size): 404 rather than a storage error.
      for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
        const max =
          name === 'token'
            ? MAX_TOKEN_LENGTH
            : name === 'proxy'
              ? MAX_PROXY_LENGTH
              : name === 'idOrEmail'
                ? MAX_ADDRESS_PARAM_LENGTH
                : MAX_ID_LENGTH;
        if (value && value.length > max) {
          throw noRoute(event.httpMethod, event.requestContext.path);
        }
      }
      if (RESEND_PATHS_NOT_SERVED.has(`${route.path} ${event.pathParameters?.id}`)) {
        throw noRoute(event.httpMethod, event.requestContext.path);
      }
      if (route.access === 'public') return;
      if (!principal)
        throw authError ?? new UnauthorizedError('Missing or invalid API key.', { errorName: 'missing_api_key' });
      if (!allows(route.access, principal.scopes)) {
        throw new InsufficientScopeError(
          `This API key lacks the access this route needs: ${describeAccess(route.access)}.`,
        );
      }
    },
  };
}

/** 404 for a path no route has; a path that is a route once `/v1` is put in front says so (a common slip). */
function noRoute(method: string, fullPath: string): NotFoundError {
  const path = fullPath.slice(0, 200);
  const stage = `/${STAGE}`;
  const outsideStage = path !== stage && !path.startsWith(`${stage}/`);
  const hint =
    outsideStage && matchPath(method, path).kind === 'route'
      ? ` The API lives under ${stage}: ${method} ${stage}${path}.`
      : '';
  return new NotFoundError(`No route ${method} ${path}.${hint}`);
}
