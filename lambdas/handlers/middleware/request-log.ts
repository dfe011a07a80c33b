// One report per API request, as answered (route, method, status, duration, request id, account): the
// outermost middleware, so it sees the status the error mapper chose. Never the path (a public link's token
// is in it), headers or body.
import type { Telemetry } from '../../app/telemetry';
import type { ApiMiddleware } from '../http/context';

/** The route of a request the manifest has no route for (the gateway's catch-all: 404, 405). */
export const UNMATCHED_ROUTE = 'unmatched';

export function requestLog(telemetry: Telemetry): ApiMiddleware {
  const started = new WeakMap<object, number>();
  const report: NonNullable<ApiMiddleware['after']> = (request) => {
    const state = request.context.sendflow;
    const begin = started.get(request) ?? performance.now();
    telemetry.requested({
      route: state?.route?.id ?? UNMATCHED_ROUTE,
      method: request.event.httpMethod,
      // No response here means the error escapes every mapper: the gateway answers 502.
      status: request.response?.statusCode ?? 502,
      durationMs: Math.round(performance.now() - begin),
      requestId: request.event.requestContext.requestId,
      ...(state?.principal ? { accountId: state.principal.accountId } : {}),
    });
  };
  return {
    before: (request) => {
      started.set(request, performance.now());
    },
    after: report,
    onError: report,
  };
}
