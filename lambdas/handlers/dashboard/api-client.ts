// The dashboard's one way to the data: the public /v1 API, called in-process through the same middy handler
// that serves keys, with the session's principal in `requestContext.authorizer` exactly as the AWS authorizer
// puts it there. Scopes, validation, rate limits and idempotency apply as for a key of that account and mode.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Principal } from '../../app/ports';
import { type HttpMethod, STAGE } from '../../manifest';
import { toAuthorizerContext } from '../authorizer-context';
import { matchPath } from '../http/routing';

/** The API handler itself (createApiHandler's result), invoked like API Gateway would. */
export type ApiInvoke = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult | undefined>;

/** An API answer that was not 2xx: its message is the API's own, shown to the person as is. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** A 422's problems, each with its field's path: the form shows each next to its field. */
    readonly details: readonly { readonly path: string; readonly message: string }[] = [],
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

export interface ApiResponse<T> {
  readonly status: number;
  readonly body: T;
  readonly headers: Readonly<Record<string, string>>;
}

export interface ApiClient {
  get<T = Record<string, unknown>>(path: string, query?: Record<string, string | undefined>): Promise<ApiResponse<T>>;
  send<T = Record<string, unknown>>(method: HttpMethod, path: string, body?: unknown): Promise<ApiResponse<T>>;
}

/**
 * `path` is below the stage, e.g. `/webhooks/wh_1/deliveries`. `clientIp` stands in the event's `sourceIp`: the
 * dashboard passes a fixed marker, since the API counts per IP only requests without a principal, which these
 * never are (the person's own address was counted by the gateway and the WAF on the way in).
 */
export function apiClient(invoke: ApiInvoke, principal: Principal, clientIp: string, now: () => number): ApiClient {
  async function call<T>(
    method: HttpMethod,
    path: string,
    query: Record<string, string> | null,
    body: unknown,
  ): Promise<ApiResponse<T>> {
    const match = matchPath(method, path);
    // A route this version of the API lacks: said like the API would, never a 500.
    if (match.kind !== 'route')
      throw new ApiCallError(404, 'not_found', `This API has no route ${method} /${STAGE}${path}.`);
    const requestId = randomUUID();
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': 'sendflow-dashboard',
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    };
    const event: APIGatewayProxyEvent = {
      resource: match.route.path,
      path,
      httpMethod: method,
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
      queryStringParameters: query && Object.keys(query).length ? query : null,
      multiValueQueryStringParameters:
        query && Object.keys(query).length ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])) : null,
      pathParameters: Object.keys(match.params).length ? match.params : null,
      stageVariables: null,
      body: body !== undefined ? JSON.stringify(body) : null,
      isBase64Encoded: false,
      requestContext: {
        accountId: '000000000000',
        apiId: 'dashboard',
        // What the REQUEST authorizer returns for a key, plus API Gateway's principalId.
        authorizer: { ...toAuthorizerContext(principal), principalId: principal.accountId },
        protocol: 'HTTP/1.1',
        httpMethod: method,
        identity: {
          sourceIp: clientIp,
          userAgent: 'sendflow-dashboard',
        } as APIGatewayProxyEvent['requestContext']['identity'],
        path: `/${STAGE}${path}`,
        stage: STAGE,
        requestId,
        requestTimeEpoch: now(),
        resourceId: 'dashboard',
        resourcePath: match.route.path,
      },
    };
    const result = await invoke(event, lambdaContext(requestId));
    if (!result) throw new Error(`dashboard: the API gave no answer to ${method} ${path}`);
    const parsed = result.body ? (JSON.parse(result.body) as Record<string, unknown>) : {};
    const responseHeaders = Object.fromEntries(
      Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]),
    );
    if (result.statusCode >= 400) {
      const details = detailsOf(parsed);
      throw new ApiCallError(
        result.statusCode,
        String(parsed.code ?? 'error'),
        errorText(parsed, details, result.statusCode),
        details,
      );
    }
    return { status: result.statusCode, body: parsed as T, headers: responseHeaders };
  }
  return {
    get: (path, query = {}) =>
      call(
        'GET',
        path,
        Object.fromEntries(Object.entries(query).filter(([, v]) => v)) as Record<string, string>,
        undefined,
      ),
    send: (method, path, body) => call(method, path, null, body),
  };
}

/**
 * The API's words: every problem of a 422 (each already names its field), else its message. The same sentences
 * go next to the fields (ApiCallError.details).
 */
function errorText(
  body: Record<string, unknown>,
  details: readonly { path: string; message: string }[],
  status: number,
): string {
  if (details.length) return details.map((d) => d.message).join(' ');
  return String(body.error ?? `The API answered ${status}.`);
}

function detailsOf(body: Record<string, unknown>): { path: string; message: string }[] {
  if (!Array.isArray(body.details)) return [];
  return (body.details as { path?: unknown; message?: unknown }[]).map((d) => ({
    path: String(d.path ?? ''),
    message: String(d.message ?? ''),
  }));
}

function lambdaContext(requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'sendflow-dashboard',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:sendflow-dashboard',
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: 'sendflow-dashboard',
    logStreamName: 'in-process',
    getRemainingTimeInMillis: () => 29_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
