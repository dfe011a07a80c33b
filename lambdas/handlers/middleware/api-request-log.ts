// Records each request that authenticated with an API key, once answered, in the account's API request log
// (GET /v1/logs, the dashboard's "API requests"): method, path, status, key id, time, User-Agent. Never the
// Authorization value, other headers, the query string or a body. The dashboard's own in-process calls are not logged (its
// session is not a key). One PutItem of ~200 bytes per request, awaited: a failed write is logged, never the
// request's failure.
import type { Logger } from '@aws-lambda-powertools/logger';
import { type ApiRequestDeps, recordApiRequest } from '../../app/api-requests/api-requests';
import { isSessionKeyId } from '../../domain/dashboard/session';
import { STAGE } from '../../manifest';
import type { ApiMiddleware } from '../http/context';

export function apiRequestLog(deps: ApiRequestDeps & { logger: Logger }): ApiMiddleware {
  const started = new WeakMap<object, number>();
  const record: NonNullable<ApiMiddleware['after']> = async (request) => {
    const state = request.context.sendflow;
    const principal = state?.principal;
    if (!principal || isSessionKeyId(principal.keyId)) return;
    const { event } = request;
    const begin = started.get(request) ?? performance.now();
    try {
      await recordApiRequest(deps, principal, {
        method: event.httpMethod,
        path: belowStage(event.path),
        status: request.response?.statusCode ?? 502,
        requestId: event.requestContext.requestId,
        at: event.requestContext.requestTimeEpoch ?? deps.clock.now(),
        durationMs: Math.round(performance.now() - begin),
        ...userAgentOf(event.headers),
      });
    } catch (error) {
      deps.logger.warn('api request log: entry not written', { error: error as Error });
    }
  };
  return {
    before: (request) => {
      started.set(request, performance.now());
    },
    after: record,
    onError: record,
  };
}

/** The User-Agent header, whatever its casing (absent when not sent). */
function userAgentOf(headers: Record<string, string | undefined> | null): { userAgent?: string } {
  const entry = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'user-agent');
  return entry?.[1] ? { userAgent: entry[1] } : {};
}

/** `/v1/emails/em_1` → `/emails/em_1` (API Gateway's `path` may carry the stage, the local gateway's not). */
function belowStage(path: string): string {
  const prefix = `/${STAGE}`;
  return path === prefix || path.startsWith(`${prefix}/`) ? path.slice(prefix.length) || '/' : path;
}
