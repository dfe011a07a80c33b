// Records each request that authenticated with an API key, once answered, in the account's API request log
// (GET /v1/logs, the dashboard's "API requests"): method, path, the route it matched, status, key id, time,
// User-Agent, and its query and both bodies as the redaction rule leaves them (domain/request-log-bodies: secrets
// removed, bounded). Never the Authorization value or another header. The dashboard's own in-process calls are
// not logged (its session is not a key). One PutItem per request (1 WRU for a 2xx), awaited: a failed write is
// logged, never the request's failure.
import type { Logger } from '@aws-lambda-powertools/logger';
import { type ApiRequestDeps, recordApiRequest } from '../../app/api-requests/api-requests';
import { isSessionKeyId } from '../../domain/dashboard/session';
import { parsedBody } from '../../domain/request-log-bodies';
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
        ...(state.route ? { route: state.route.path } : {}),
        ...(event.queryStringParameters ? { query: definedOnly(event.queryStringParameters) } : {}),
        requestBody: state.body !== undefined ? state.body : rawBody(event.body, event.isBase64Encoded),
        responseBody: rawBody(request.response?.body, request.response?.isBase64Encoded),
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

/** A body larger than this is not parsed for the log (its stored form is cut to 8 KB at most anyway). */
const PARSED_AT_MOST = 256 * 1024;

/** A raw body as the log takes it: parsed JSON or text; a binary or huge one only by its size. */
function rawBody(body: string | null | undefined, base64: boolean | undefined): unknown {
  if (!body) return undefined;
  if (base64 || body.length > PARSED_AT_MOST) return `[a body of ${body.length} characters, not kept]`;
  return parsedBody(body);
}

function definedOnly(record: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter((e): e is [string, string] => e[1] !== undefined));
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
