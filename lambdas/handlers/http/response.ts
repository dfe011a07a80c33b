// Response shaping shared by every HTTP handler: JSON bodies built through their published schemas, and the one
// error shape (DESIGN §7).
import type { APIGatewayProxyResult } from 'aws-lambda';
import * as z from 'zod';
import { errorBody } from '../../domain/error-names';
import { AppError, MethodNotAllowedError, RateLimitedError } from '../../domain/errors';

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}

/** The named schemas of the API's answers: the OpenAPI document's `components/schemas`, referenced by name. */
export const apiSchemas = z.registry<{ id: string }>();

/** Registers `schema` as the component `id` (a schema used in several answers is published once). */
export function named<S extends z.ZodType>(id: string, schema: S, description?: string): S {
  const described = description ? schema.meta({ description }) : schema;
  apiSchemas.add(described, { id });
  return described;
}

/** A time in an answer: ISO 8601 in UTC, e.g. 2026-11-25T08:00:00.000Z. */
export const isoTime = z.string().meta({ format: 'date-time' });

/** A count or a number of milliseconds in an answer. */
export const integer = z.number().int();

/**
 * A page of a list route (`object: list`): `has_more`, and `next_after`, the one way to page whatever the filter.
 * `bounded` names what a filtered read stops at (e.g. "rows examined").
 */
export function pageSchema<S extends z.ZodType>(id: string, item: S, bounded: string) {
  return named(
    id,
    z.strictObject({
      object: z.literal('list'),
      has_more: z.boolean(),
      next_after: z
        .string()
        .nullable()
        .meta({
          description:
            "The `after` of the next page; null when has_more is false. Usually the last item's id; a filtered " +
            `read that stopped at its bound of ${bounded} gives the last one it examined (the page may then be ` +
            'short, even empty).',
        }),
      data: z.array(item),
    }),
  );
}

/** A route's success answer as the OpenAPI document publishes it: a JSON body of `schema`, or an HTML page. */
export type SuccessSpec<S extends z.ZodType = z.ZodType> =
  | { readonly status: 200 | 201 | 202; readonly schema: S; readonly description: string }
  | {
      readonly status: 200;
      readonly html: true;
      readonly description: string;
      /** Other statuses answered with a page rather than the JSON error, e.g. 410 for a dead link. */
      readonly pages?: Readonly<Record<number, string>>;
    };

export const success = <S extends z.ZodType>(status: 200 | 201 | 202, schema: S, description: string) =>
  ({ status, schema, description }) as const;

export const htmlPage = (description: string, pages?: Readonly<Record<number, string>>) =>
  ({ status: 200, html: true, description, ...(pages ? { pages } : {}) }) as const;

/** A value as it may be handed over: the schema's output type with every array and property read-only. */
export type Immutable<T> = T extends readonly (infer U)[]
  ? readonly Immutable<U>[]
  : T extends object
    ? { readonly [K in keyof T]: Immutable<T[K]> }
    : T;

/** The body a response schema describes, as a view function builds it. */
export type Body<S extends z.ZodType> = Immutable<z.output<S>>;

/**
 * A success answer: its status comes from the route's declared spec, and its body must have the spec's schema
 * type, so the compiler ties every view to the schema the OpenAPI document publishes. Nothing is parsed at run
 * time (an answer is built from data the API itself stored and validated): the check costs nothing per request.
 * What a type cannot see (a property spread in from elsewhere) the strict schemas (`additionalProperties: false`)
 * catch in test/integration/openapi-conformance.test.ts, which validates a real answer of every operation.
 */
export function reply<S extends z.ZodType>(
  spec: { readonly status: 200 | 201 | 202; readonly schema: S },
  body: Body<S>,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return json(spec.status, body, headers);
}

/** The one error shape (DESIGN §7), published as the Error component: the spec's fields and Resend's. */
export const errorSchema = named(
  'Error',
  z.strictObject({
    error: z.string().meta({ description: 'A human-readable message; 5xx messages reveal nothing internal.' }),
    status: z.number().int().meta({ description: 'The HTTP status, repeated.' }),
    code: z.string().meta({ description: 'A stable machine-readable code, e.g. validation_error, not_found.' }),
    name: z.string().meta({
      description:
        "A stable snake_case name in Resend's vocabulary where it has one (e.g. missing_required_field, " +
        'invalid_api_key, restricted_api_key, rate_limit_exceeded), else the code: what the Resend SDK reads.',
    }),
    message: z.string().meta({ description: 'The same text as `error` (the Resend SDK reads `message`).' }),
    statusCode: z.number().int().meta({ description: 'The same as `status` (the Resend SDK reads `statusCode`).' }),
    retry_after: z.number().int().optional().meta({ description: 'On 429: seconds until the window reopens.' }),
    details: z
      .array(z.strictObject({ path: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'On 422: every problem, with the path of the field it is about.' }),
  }),
);

/** Any thrown value → the JSON error response. Unknown errors become a 500 that reveals nothing. */
export function errorResponse(error: unknown): APIGatewayProxyResult {
  if (!(error instanceof AppError)) {
    return json(500, errorBody({ message: 'Internal server error.', status: 500, code: 'internal_error' }));
  }
  const headers: Record<string, string> = {};
  const limited = error instanceof RateLimitedError ? error.retryAfterSeconds : undefined;
  const body: Body<typeof errorSchema> = errorBody({
    message: error.message,
    status: error.status,
    code: error.code,
    name: error.errorName,
    ...(error.details ? { details: error.details } : {}),
    ...(limited !== undefined ? { retryAfter: limited } : {}),
  });
  if (limited !== undefined) headers['Retry-After'] = String(limited);
  if (error instanceof MethodNotAllowedError) headers.Allow = error.allow.join(', ');
  return json(error.status, body, headers);
}
