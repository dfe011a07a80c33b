// What the HTTP middlewares learn about a request and hand to the route handler.

import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ZodType } from 'zod';
import type { Principal } from '../../app/ports';
import type { TraceSpan } from '../../app/tracing';
import type { Tenant } from '../../app/webhooks/ports';
import type { RateDecision } from '../../domain/rate-limit';
import type { RouteId, RouteSpec } from '../../manifest';
import type { SuccessSpec } from './response';

export interface RequestState {
  /** The manifest route the gateway matched; absent for the gateway's catch-all (404/405). */
  route?: RouteSpec;
  /** The authenticated caller, or null for requests without a valid key. */
  principal: Principal | null;
  /** Why authentication failed, when it did. */
  authError?: Error;
  clientIp: string;
  decision?: RateDecision;
  body?: unknown;
  /** An Idempotency-Key this request claimed (completed or released when it ends). */
  idempotencyClaim?: { key: string; fingerprint: string };
  /** The stored response to replay for a repeated Idempotency-Key. */
  replay?: { statusCode: number; body: string };
}

/** `span`: the request's trace span (handlers/middleware/trace-request.ts), absent where no middleware made one. */
export type ApiContext = Context & { sendflow: RequestState; span?: TraceSpan };
export type ApiMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>;

/** What a route handler receives. */
export interface RouteRequest {
  readonly caller: Principal;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  /** Epoch ms when the request arrived at the gateway (API Gateway's requestTimeEpoch). */
  readonly receivedAt: number;
  /** The request's trace span: its `trace` goes with what the request stores (a send's emails); absent untraced. */
  readonly span?: TraceSpan;
}

export type RouteHandler = (request: RouteRequest) => Promise<APIGatewayProxyResult>;

/**
 * The zod schemas a route validates, by route id: the OpenAPI document is generated from them. `form`: the
 * `application/x-www-form-urlencoded` body of a public form post (raw body routes), `required` unless it may be empty.
 */
export type RequestSchemas = Partial<
  Record<
    RouteId,
    {
      readonly body?: ZodType;
      readonly query?: ZodType;
      readonly form?: { readonly schema: ZodType; readonly required: boolean };
    }
  >
>;

/**
 * The success answer of each route, by route id (handlers answer through these: `reply(responses.x, body)`): the
 * OpenAPI document publishes them, and a manifest route without one fails test/unit/openapi.test.ts.
 */
export type ResponseSchemas = Partial<Record<RouteId, SuccessSpec>>;

/** What a public route's handler receives: no caller, and the body as sent (for form posts). */
export interface PublicRouteRequest extends Omit<RouteRequest, 'caller' | 'body'> {
  readonly rawBody: string | null;
}

export type PublicRouteHandler = (request: PublicRouteRequest) => Promise<APIGatewayProxyResult>;

/** The account and mode a caller acts in: test-mode data never meets live-mode data. */
export const tenantOf = (caller: Principal): Tenant => ({ accountId: caller.accountId, mode: caller.mode });
