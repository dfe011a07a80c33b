// The OpenAPI document, generated from the manifest's routes and the handlers' zod schemas (the request schemas
// they validate with, the response schemas they answer through), so the published contract cannot drift from
// the code (DESIGN §1). `npm run openapi` writes docs/openapi.json; GET /v1/openapi.json serves it.
import * as z from 'zod';
import { describeAccess } from '../../domain/scopes';
import { type RouteSpec, routes, STAGE } from '../../manifest';
import { responseSchemas as apiKeyResponses, requestSchemas as apiKeys } from './api-keys';
import { responseSchemas as contactResponses, requestSchemas as contacts } from './contacts';
import type { RequestSchemas, ResponseSchemas } from './context';
import { requestSchemas as deliveries, responseSchemas as deliveryResponses } from './deliveries';
import { responseSchemas as domainResponses, requestSchemas as domains } from './domains';
import { requestSchemas as emailMetrics, responseSchemas as emailMetricsResponses } from './email-metrics';
import { responseSchemas as emailResponses, requestSchemas as emails } from './emails';
import { responseSchemas as eventTypeResponses } from './event-types';
import { requestSchemas as inbound, responseSchemas as inboundResponses } from './inbound';
import { requestSchemas as listen, responseSchemas as listenResponses } from './listen-sessions';
import { responseSchemas as logResponses, requestSchemas as logs } from './logs';
import { documentFields } from './openapi-fields';
import { webhooksSection } from './openapi-webhooks';
import { requestSchemas as recoveries, responseSchemas as recoveryResponses } from './recoveries';
import { apiSchemas, htmlPage, named, type SuccessSpec, success } from './response';
import { responseSchemas as suppressionResponses, requestSchemas as suppressions } from './suppressions';
import { responseSchemas as templateResponses, requestSchemas as templates } from './templates';
import { requestSchemas as unsubscribe, responseSchemas as unsubscribeResponses } from './unsubscribe';
import { responseSchemas as usageResponses } from './usage';
import { responseSchemas as webhookEventResponses, requestSchemas as webhookEvents } from './webhook-events';
import { requestSchemas as webhookMetrics, responseSchemas as webhookMetricsResponses } from './webhook-metrics';
import { responseSchemas as webhookResponses, requestSchemas as webhooks } from './webhooks';

/** The answers of the reference routes themselves (lambdas/handlers/http/reference.ts answers through them). */
export const referenceResponses = {
  getOpenApi: success(
    200,
    named('OpenApiDocument', z.record(z.string(), z.unknown())),
    'This document (OpenAPI 3.1, JSON)',
  ),
  apiReference: htmlPage('The API reference: every operation, its parameters, request and response schemas'),
} as const;

const requests: RequestSchemas = {
  ...apiKeys,
  ...webhooks,
  ...deliveries,
  ...recoveries,
  ...emails,
  ...emailMetrics,
  ...webhookMetrics,
  ...domains,
  ...inbound,
  ...contacts,
  ...templates,
  ...unsubscribe,
  ...listen,
  ...webhookEvents,
  ...suppressions,
  ...logs,
};

/** Every route's request schemas (body, query, form): what `validate` checks, for tests that walk them all. */
export const requestSchemasByRoute = (): RequestSchemas => requests;

const responses: ResponseSchemas = {
  ...referenceResponses,
  ...apiKeyResponses,
  ...webhookResponses,
  ...deliveryResponses,
  ...recoveryResponses,
  ...emailResponses,
  ...emailMetricsResponses,
  ...webhookMetricsResponses,
  ...domainResponses,
  ...inboundResponses,
  ...contactResponses,
  ...templateResponses,
  ...unsubscribeResponses,
  ...usageResponses,
  ...logResponses,
  ...eventTypeResponses,
  ...listenResponses,
  ...webhookEventResponses,
  ...suppressionResponses,
};

/** The API's operations: the manifest's routes less the dashboard's pages (HTML for people, not operations). */
const operations = (routes as readonly RouteSpec[]).filter((route) => !route.dashboard);

/** Manifest routes that declare no success answer: each must, or the document (and its test) fails. */
export function undocumentedRoutes(): string[] {
  return operations.filter((route) => !responses[route.id as keyof ResponseSchemas]).map((route) => route.id);
}

type JsonSchema = Record<string, unknown>;

const SCHEMA_REF = '#/components/schemas/';

/** What zod adds that the document does not need: `$schema`/`$id`, and the bounds every `.int()` carries. */
function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (!value || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$schema' || key === '$id') continue;
    if (key === 'minimum' && inner === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && inner === Number.MAX_SAFE_INTEGER) continue;
    out[key] = tidy(inner);
  }
  return out;
}

/** A request schema, inline: what the caller may send (defaults make a field optional). */
const requestSchema = (schema: z.ZodType) =>
  tidy(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })) as JsonSchema;

/** Every named response schema, once, as components/schemas; they reference each other by name. */
function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(apiSchemas, { uri: (id) => `${SCHEMA_REF}${id}`, unrepresentable: 'any' });
  const sorted = Object.keys(schemas).sort();
  return Object.fromEntries(sorted.map((id) => [id, tidy(schemas[id]) as JsonSchema]));
}

/** A response schema: a reference when it is named, else inline. */
function responseSchema(schema: z.ZodType): JsonSchema {
  const id = apiSchemas.get(schema)?.id;
  if (id) return { $ref: `${SCHEMA_REF}${id}` };
  return tidy(z.toJSONSchema(schema, { unrepresentable: 'any' })) as JsonSchema;
}

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** On every answer of the API function: success or error (the gateway's own refusals may lack them). */
const COMMON_HEADERS = {
  'X-RateLimit-Limit': header('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': header('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': header('X-RateLimit-Reset'),
  'X-Request-Id': header('X-Request-Id'),
};

const HTML = { 'text/html': { schema: { type: 'string' } } };

/** The success answer, and the pages a public route answers instead of the JSON error (a dead link's 410). */
function successResponses(spec: SuccessSpec, idempotent: boolean): Record<string, JsonSchema> {
  if ('html' in spec) {
    const pages = Object.entries(spec.pages ?? {}).map(([status, description]) => [
      status,
      { description, headers: COMMON_HEADERS, content: HTML },
    ]);
    return {
      [spec.status]: { description: spec.description, headers: COMMON_HEADERS, content: HTML },
      ...Object.fromEntries(pages),
    };
  }
  const headers = idempotent
    ? { ...COMMON_HEADERS, 'Idempotent-Replayed': header('Idempotent-Replayed') }
    : COMMON_HEADERS;
  return {
    [spec.status]: {
      description: spec.description,
      headers,
      content: { 'application/json': { schema: responseSchema(spec.schema) } },
    },
  };
}

const errorRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** The error answers a route can give besides `default`: by what it takes and who may call it. */
function errorResponses(route: RouteSpec, validates: boolean): Record<string, unknown> {
  return {
    ...(route.access === 'public' ? {} : { '401': errorRef('Unauthorized'), '403': errorRef('Forbidden') }),
    ...(route.path.includes('{') ? { '404': errorRef('NotFound') } : {}),
    ...(validates ? { '422': errorRef('ValidationFailed') } : {}),
    '429': errorRef('RateLimited'),
    default: errorRef('Error'),
  };
}

/** The tag an operation is listed under: its resource (deliveries and recoveries apart from webhooks). */
export function tagOf(route: Pick<RouteSpec, 'path' | 'id'>): string {
  if (route.id === 'getOpenApi' || route.id === 'apiReference') return 'Reference';
  const segments = route.path.split('/').filter((s) => s && !s.startsWith('{'));
  if (segments.includes('recoveries')) return 'Webhook recoveries';
  if (segments.includes('deliveries') && segments[0] === 'webhooks') return 'Webhook deliveries';
  const first = segments[0] ?? '';
  if (first === 'unsubscribe' || segments.includes('confirm')) return 'Public links';
  if (first === 'api-keys') return 'API keys';
  const words = first.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function operation(route: RouteSpec): JsonSchema {
  const own = requests[route.id as keyof RequestSchemas];
  const spec = responses[route.id as keyof ResponseSchemas];
  if (!spec) throw new Error(`route ${route.id} declares no success response`);
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = own?.query ? requestSchema(own.query) : undefined;
  const required = new Set((query?.required ?? []) as string[]);
  const queryParams = Object.entries((query?.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => {
    // A parameter's own words and example go on the Parameter Object (where the reference reads them).
    const { description, example, ...rest } = schema;
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(description ? { description } : {}),
      ...(example !== undefined ? { example } : {}),
      schema: rest,
    };
  });
  const idempotent = 'idempotent' in route && route.idempotent;
  const body = own?.body
    ? { required: true, content: { 'application/json': { schema: requestSchema(own.body) } } }
    : own?.form
      ? {
          required: own.form.required,
          content: { 'application/x-www-form-urlencoded': { schema: requestSchema(own.form.schema) } },
        }
      : undefined;
  return {
    operationId: route.id,
    summary: route.summary,
    description: `Access: ${describeAccess(route.access)}.`,
    tags: [tagOf(route)],
    ...(route.access === 'public' ? { security: [] } : {}),
    'x-sendflow-access': typeof route.access === 'string' ? route.access : route.access.scope,
    ...(idempotent ? { 'x-sendflow-idempotent': true } : {}),
    parameters: [
      ...pathParams,
      ...queryParams,
      ...(idempotent
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: 'The same key and body within 24 h replays the first answer (Idempotent-Replayed: true).',
              schema: { type: 'string', maxLength: 255 },
            },
          ]
        : []),
    ],
    ...(body ? { requestBody: body } : {}),
    responses: {
      ...successResponses(spec, Boolean(idempotent)),
      ...errorResponses(route, Boolean(own?.body || own?.query || own?.form)),
    },
  };
}

const errorContent = { 'application/json': { schema: { $ref: `${SCHEMA_REF}Error` } } };
const errorResponse = (description: string, headers: Record<string, unknown> = COMMON_HEADERS) => ({
  description,
  headers,
  content: errorContent,
});

/** A Host header we name as a server: a DNS name or an IP literal, with an optional port; nothing else. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.)*[A-Za-z0-9-]{1,63}|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The document's `servers` for a request: the origin it came through (its Host, and https when the gateway says
 * so in X-Forwarded-Proto), so a client built from the served document calls the server that served it. A Host
 * that is no host name gives the relative `/` (this host, whatever it is).
 */
export function servedFrom(headers: Readonly<Record<string, string>>): { url: string; description: string }[] {
  const find = (name: string) => Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const host = find('host')?.trim() ?? '';
  const proto = find('x-forwarded-proto')?.split(',')[0]?.trim() === 'https' ? 'https' : 'http';
  const description = 'The server that served this document (paths begin with the stage, /v1)';
  return [{ url: HOST.test(host) ? `${proto}://${host}` : '/', description }];
}

export function buildOpenApi(): Record<string, unknown> {
  const missing = undocumentedRoutes();
  if (missing.length) throw new Error(`routes without a declared success response: ${missing.join(', ')}`);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of operations) {
    const path = `/${STAGE}${route.path}`;
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) };
  }
  const tags = [...new Set(operations.map(tagOf))].map((name) => ({ name }));
  return documentFields({
    openapi: '3.1.0',
    info: {
      title: 'Sendflow API',
      version: STAGE,
      description:
        'Email delivery with signed, retried, logged webhooks. Generated from lambdas/manifest.ts and the ' +
        'handlers\u2019 zod schemas.',
    },
    // The committed file names `npm start` on its default port; GET /v1/openapi.json names the server that
    // served it (servedFrom). Paths carry the stage (/v1/…): a client's base URL is the origin alone.
    servers: [{ url: 'http://127.0.0.1:3000', description: 'npm start on its default PORT (3000)' }],
    security: [{ bearer: [] }],
    tags,
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'sf_live_… or sf_test_… API key' } },
      headers: {
        'X-RateLimit-Limit': {
          description: 'Requests per second the window allows',
          required: true,
          schema: { type: 'integer' },
        },
        'X-RateLimit-Remaining': {
          description: 'Requests left in the current window',
          required: true,
          schema: { type: 'integer' },
        },
        'X-RateLimit-Reset': {
          description: 'Unix time (s) the window ends',
          required: true,
          schema: { type: 'integer' },
        },
        'X-Request-Id': { description: 'Quote it to support', required: true, schema: { type: 'string' } },
        'Retry-After': { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer' } },
        'Idempotent-Replayed': {
          description: 'true: this is the stored answer to an earlier request with the same Idempotency-Key',
          schema: { type: 'string', enum: ['true'] },
        },
      },
      responses: {
        Unauthorized: errorResponse(
          '401 unauthorized (name missing_api_key, or invalid_api_key): a missing, malformed, unknown or revoked API key',
        ),
        Forbidden: errorResponse(
          "403 insufficient_scope (name restricted_api_key): the key lacks the route's scope, or sends from a domain it is not restricted to",
        ),
        NotFound: errorResponse('404 not_found: no such resource in this account and mode'),
        ValidationFailed: errorResponse(
          '422 validation_error (name validation_error, missing_required_field, invalid_from_address, …): every problem in `details`, with its path',
        ),
        RateLimited: errorResponse('429: the rate limit or the monthly quota; retry after `Retry-After` seconds', {
          ...COMMON_HEADERS,
          'Retry-After': header('Retry-After'),
        }),
        Error: errorResponse('Any other error: 400, 405, 409, 410, 413, 500, …; the one error shape (DESIGN §7)'),
      },
      schemas: componentSchemas(),
    },
    webhooks: webhooksSection(),
  });
}
