// HTTP handlers for GET /v1/logs[/:id]: the account's recent API requests in the caller's mode (method, path,
// route, status, key, time, User-Agent), newest first, kept 24 h, filtered by status (a class or a code),
// method, route, key and time; one request with its query and both bodies, secrets removed and bounded
// (domain/request-log-bodies). Resend's `logs` (endpoint, response_status, user_agent, request_body,
// response_body) beside Sendflow's names. Full access only: it names keys and every resource touched.
import * as z from 'zod';
import {
  API_REQUESTS_SHOWN,
  type ApiRequestDeps,
  getApiRequest,
  searchApiRequests,
} from '../../app/api-requests/api-requests';
import type { ApiRequestEntry, ApiRequestFilter } from '../../app/api-requests/ports';
import { routes } from '../../manifest';
import type { RequestSchemas, ResponseSchemas, RouteHandler } from './context';
import { integer, isoTime, named, pageSchema, reply, success } from './response';
import { validate } from './validate';

/** The routes a key can call (and so the log can hold): the `route` filter's values. */
export const LOGGED_ROUTES = [
  ...new Set(routes.filter((r) => r.access !== 'public' && !('dashboard' in r)).map((r) => r.path)),
].sort();
export const LOGGED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const entryFields = {
  id: z.string(),
  method: z.string(),
  path: z.string().meta({ description: 'Below /v1, without the query string.' }),
  endpoint: z.string().meta({ description: "The same as `path` (Resend's name)." }),
  route: z
    .string()
    .nullable()
    .meta({ description: 'The route it matched, e.g. `/emails/{id}`; null for a path of no route.' }),
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

const BODY_NOTE =
  'Secrets removed (API keys, signing secrets, passwords, tokens, Authorization values, signed URL parameters), ' +
  'email bodies cut to 100 characters and attachment content dropped, then fitted into what the entry keeps ' +
  '(about 1 KB with the rest of a 2xx entry, 8 KB for a 4xx or 5xx): long values end in "… (N more characters)", ' +
  'long lists in "… N more items". A body that was not JSON is its text, cut.';

/** A stored body: a JSON object (most), a list (a batch), or text (a body that was not JSON, or cut). */
const jsonBody = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string()]);
type JsonBody = z.infer<typeof jsonBody> | null;

const logSchema = named(
  'ApiRequestLogItem',
  z.strictObject({
    object: z.literal('log'),
    ...entryFields,
    query: z.string().nullable().meta({ description: 'The query string sent, secrets removed; null if none.' }),
    request_body: jsonBody.nullable().meta({ description: `The request's JSON body; null without one. ${BODY_NOTE}` }),
    response_body: jsonBody.nullable().meta({
      description: `The response's JSON body (a 4xx's error and field problems); null without one. ${BODY_NOTE}`,
    }),
  }),
);

const STATUS = /^([1-5])(xx|[0-9]{2})$/;

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(API_REQUESTS_SHOWN).default(API_REQUESTS_SHOWN),
  after: z
    .string()
    .regex(/^req_[0-9a-z]{26}$/, 'must be the next_after of the previous page (req_…)')
    .optional()
    .meta({ description: 'The `next_after` of the previous page (or a logged request id): older requests.' }),
  status: z
    .string()
    .regex(STATUS, 'must be a status class (2xx, 4xx, 5xx) or a status code (e.g. 422)')
    .optional()
    .meta({ description: 'A status class (`2xx`, `4xx`, `5xx`) or one code (`422`). 4xx and 5xx read an index.' }),
  method: z.enum(LOGGED_METHODS).optional(),
  route: z
    .enum(LOGGED_ROUTES as [string, ...string[]])
    .optional()
    .meta({ description: 'A route of this API as written in its paths, e.g. `/emails/{id}`.' }),
  api_key_id: z
    .string()
    .regex(/^key_[A-Za-z0-9_-]{1,64}$/, 'must be an API key id (key_…)')
    .optional()
    .meta({ description: 'Requests made with this key.' }),
  since: z.iso.datetime({ offset: true }).optional().meta({ description: 'Requests that arrived at or after.' }),
  until: z.iso.datetime({ offset: true }).optional().meta({ description: 'Requests that arrived before.' }),
});

const responses = {
  listApiRequests: success(
    200,
    pageSchema('ApiRequestLog', requestLogEntry, 'entries read (100 per partition key a page)'),
    `The newest API requests of this account and mode that match the filters (at most ${API_REQUESTS_SHOWN} a page, the last 24 h), newest first`,
  ),
  getApiRequest: success(200, logSchema, 'The logged request'),
} as const;

function entryView(e: ApiRequestEntry) {
  return {
    id: e.id,
    method: e.method,
    path: e.path,
    endpoint: e.path,
    route: e.route ?? null,
    status: e.status,
    response_status: e.status,
    user_agent: e.userAgent ?? null,
    api_key_id: e.keyId,
    request_id: e.requestId,
    duration_ms: Math.round(e.durationMs),
    created_at: new Date(e.at).toISOString(),
  };
}

/** A stored body back as JSON (it is stored as JSON text; an unreadable one as its text). */
function bodyView(text: string | undefined): JsonBody {
  if (text === undefined) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value === null || typeof value !== 'object' ? String(value) : (value as JsonBody);
  } catch {
    return text;
  }
}

/** `4xx` → 400–499, `422` → 422–422. */
function statusRange(status: string): readonly [number, number] {
  const [, hundreds = '', rest = ''] = STATUS.exec(status) ?? [];
  const base = Number(hundreds) * 100;
  return rest === 'xx' ? [base, base + 99] : [base + Number(rest), base + Number(rest)];
}

export function logHandlers(deps: Pick<ApiRequestDeps, 'apiRequests' | 'clock'>) {
  const list: RouteHandler = async ({ caller, query }) => {
    const { limit, after, status, method, route, api_key_id, since, until } = validate(listQuery, query, 'query');
    const filter: ApiRequestFilter = {
      ...(status ? { status: statusRange(status) } : {}),
      ...(method ? { method } : {}),
      ...(route ? { route } : {}),
      ...(api_key_id ? { keyId: api_key_id } : {}),
      ...(since ? { since: Date.parse(since) } : {}),
      ...(until ? { until: Date.parse(until) } : {}),
    };
    const page = await searchApiRequests(deps, caller, filter, limit, after);
    return reply(responses.listApiRequests, {
      object: 'list',
      has_more: page.next !== null,
      next_after: page.next,
      data: page.entries.map((e) => ({ object: 'api_request' as const, ...entryView(e) })),
    });
  };
  const get: RouteHandler = async ({ caller, params }) => {
    const entry = await getApiRequest(deps, caller, params.id ?? '');
    return reply(responses.getApiRequest, {
      object: 'log',
      ...entryView(entry),
      query: entry.query ?? null,
      request_body: bodyView(entry.requestBody),
      response_body: bodyView(entry.responseBody),
    });
  };
  return { listApiRequests: list, getApiRequest: get };
}

export const requestSchemas: RequestSchemas = { listApiRequests: { query: listQuery } };
export const responseSchemas: ResponseSchemas = responses;
