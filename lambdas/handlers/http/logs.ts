// HTTP handlers for GET /v1/logs[/:id]: the account's recent API requests in the caller's mode (method, path,
// status, key, time, User-Agent), newest first, kept 24 h; Resend's `logs` (endpoint, response_status, user_agent)
// beside Sendflow's names. Full access only: it names keys and every resource touched. Bodies are never kept:
// `request_body` and `response_body` are null.
import * as z from 'zod';
import {
  API_REQUESTS_SHOWN,
  type ApiRequestDeps,
  getApiRequest,
  listApiRequests,
} from '../../app/api-requests/api-requests';
import type { ApiRequestEntry } from '../../app/api-requests/ports';
import type { RequestSchemas, ResponseSchemas, RouteHandler } from './context';
import { integer, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const entryFields = {
  id: z.string(),
  method: z.string(),
  path: z.string().meta({ description: 'Below /v1, without the query string.' }),
  endpoint: z.string().meta({ description: "The same as `path` (Resend's name)." }),
  status: integer,
  response_status: integer.meta({ description: "The same as `status` (Resend's name)." }),
  user_agent: z
    .string()
    .nullable()
    .meta({ description: 'The User-Agent sent (its first 200 characters); null if none.' }),
  api_key_id: z.string().meta({ description: 'The key the request was made with (its hint: GET /v1/api-keys).' }),
  request_id: z.string().meta({ description: 'The X-Request-Id it was answered with.' }),
  duration_ms: integer,
  created_at: isoTime,
};

const requestLogEntry = named(
  'ApiRequestLogEntry',
  z.strictObject({ object: z.literal('api_request'), ...entryFields }),
);

const logSchema = named(
  'ApiRequestLogItem',
  z.strictObject({
    object: z.literal('log'),
    ...entryFields,
    request_body: z.null().meta({ description: 'Always null: Sendflow never keeps a request body.' }),
    response_body: z.null().meta({ description: 'Always null: Sendflow never keeps a response body.' }),
  }),
);

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(API_REQUESTS_SHOWN).default(API_REQUESTS_SHOWN),
  after: z
    .string()
    .regex(/^req_[0-9a-z]{26}$/, 'must be a logged request id (req_…)')
    .optional()
    .meta({ description: 'A logged request id: the page continues with older requests.' }),
});

const responses = {
  listApiRequests: success(
    200,
    named(
      'ApiRequestLog',
      z.strictObject({ object: z.literal('list'), has_more: z.boolean(), data: z.array(requestLogEntry) }),
    ),
    `The newest API requests of this account and mode (at most ${API_REQUESTS_SHOWN} a page, the last 24 h), newest first`,
  ),
  getApiRequest: success(200, logSchema, 'The logged request'),
} as const;

function entryView(e: ApiRequestEntry) {
  return {
    id: e.id,
    method: e.method,
    path: e.path,
    endpoint: e.path,
    status: e.status,
    response_status: e.status,
    user_agent: e.userAgent ?? null,
    api_key_id: e.keyId,
    request_id: e.requestId,
    duration_ms: Math.round(e.durationMs),
    created_at: new Date(e.at).toISOString(),
  };
}

export function logHandlers(deps: Pick<ApiRequestDeps, 'apiRequests' | 'clock'>) {
  const list: RouteHandler = async ({ caller, query }) => {
    const { limit, after } = validate(listQuery, query, 'query');
    // One more than asked tells whether there is more.
    const entries = await listApiRequests(deps, caller, limit + 1, after);
    const page = entries.slice(0, limit);
    return reply(responses.listApiRequests, {
      object: 'list',
      has_more: entries.length > limit,
      data: page.map((e) => ({ object: 'api_request' as const, ...entryView(e) })),
    });
  };
  const get: RouteHandler = async ({ caller, params }) => {
    const entry = await getApiRequest(deps, caller, params.id ?? '');
    return reply(responses.getApiRequest, {
      object: 'log',
      ...entryView(entry),
      request_body: null,
      response_body: null,
    });
  };
  return { listApiRequests: list, getApiRequest: get };
}

export const requestSchemas: RequestSchemas = { listApiRequests: { query: listQuery } };
export const responseSchemas: ResponseSchemas = responses;
