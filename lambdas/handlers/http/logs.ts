// HTTP handler for GET /v1/logs: the account's recent API requests in the caller's mode (method, path, status,
// key, time), newest first, at most 100, kept 24 h. Full access only: it names keys and every resource touched.
import * as z from 'zod';
import { API_REQUESTS_SHOWN, type ApiRequestDeps, listApiRequests } from '../../app/api-requests/api-requests';
import type { ResponseSchemas, RouteHandler } from './context';
import { integer, isoTime, named, reply, success } from './response';

const requestLogEntry = named(
  'ApiRequestLogEntry',
  z.strictObject({
    object: z.literal('api_request'),
    id: z.string(),
    method: z.string(),
    path: z.string().meta({ description: 'Below /v1, without the query string.' }),
    status: integer,
    api_key_id: z.string().meta({ description: 'The key the request was made with (its hint: GET /v1/api-keys).' }),
    request_id: z.string().meta({ description: 'The X-Request-Id it was answered with.' }),
    duration_ms: integer,
    created_at: isoTime,
  }),
);

const responses = {
  listApiRequests: success(
    200,
    named('ApiRequestLog', z.strictObject({ object: z.literal('list'), data: z.array(requestLogEntry) })),
    `The newest API requests of this account and mode (at most ${API_REQUESTS_SHOWN}, the last 24 h), newest first`,
  ),
} as const;

export function logHandlers(deps: Pick<ApiRequestDeps, 'apiRequests' | 'clock'>) {
  const list: RouteHandler = async ({ caller }) => {
    const entries = await listApiRequests(deps, caller);
    return reply(responses.listApiRequests, {
      object: 'list',
      data: entries.map((e) => ({
        object: 'api_request' as const,
        id: e.id,
        method: e.method,
        path: e.path,
        status: e.status,
        api_key_id: e.keyId,
        request_id: e.requestId,
        duration_ms: Math.round(e.durationMs),
        created_at: new Date(e.at).toISOString(),
      })),
    });
  };
  return { listApiRequests: list };
}

export const responseSchemas: ResponseSchemas = responses;
