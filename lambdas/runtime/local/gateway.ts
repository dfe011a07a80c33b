// The local API Gateway: node:http in, REST API proxy events out. Like API Gateway it strips the stage,
// matches the manifest's resources, runs the REQUEST authorizer (with its result cache), then the API Lambda.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { PayloadTooLargeError } from '../../domain/errors';
import { errorResponse } from '../../handlers/http/response';
import { matchPath, type PathMatch } from '../../handlers/http/routing';
import { STAGE } from '../../manifest';

/** API Gateway's own payload ceiling; our handlers enforce the (smaller) configured limit. */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;

export type Authorizer = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;
export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** API Gateway's authorizer result cache, keyed by the Authorization header; flushable like the real one. */
export class AuthorizerResultCache {
  private readonly entries = new Map<string, { result: APIGatewayAuthorizerResult; expires: number }>();

  get(key: string, now: number): APIGatewayAuthorizerResult | undefined {
    const hit = this.entries.get(key);
    return hit && hit.expires > now ? hit.result : undefined;
  }

  set(key: string, result: APIGatewayAuthorizerResult, expires: number): void {
    this.entries.set(key, { result, expires });
  }

  flush(): void {
    this.entries.clear();
  }
}

export interface GatewayOptions {
  readonly authorizer: Authorizer;
  readonly cache: AuthorizerResultCache;
  readonly api: ApiHandler;
  readonly authCacheTtlSeconds: number;
  readonly clock: () => number;
}

export function createGateway(options: GatewayOptions) {
  const { cache } = options;

  async function authorize(event: APIGatewayProxyEvent, methodArn: string) {
    const key = event.headers.Authorization ?? event.headers.authorization ?? '';
    const hit = cache.get(key, options.clock());
    if (hit) return hit;
    const result = await options.authorizer({
      type: 'REQUEST',
      methodArn,
      resource: event.resource,
      path: event.path,
      httpMethod: event.httpMethod,
      headers: event.headers,
      multiValueHeaders: event.multiValueHeaders,
      queryStringParameters: event.queryStringParameters,
      multiValueQueryStringParameters: event.multiValueQueryStringParameters,
      pathParameters: event.pathParameters,
      stageVariables: null,
      requestContext: event.requestContext,
    } as APIGatewayRequestAuthorizerEvent);
    if (options.authCacheTtlSeconds > 0) cache.set(key, result, options.clock() + options.authCacheTtlSeconds * 1000);
    return result;
  }

  async function handle(req: IncomingMessage): Promise<APIGatewayProxyResult> {
    // requestTimeEpoch is when the request arrived, as API Gateway stamps it: before the body is read.
    const receivedAt = Date.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const body = await readBody(req);
    if (body === null) return errorResponse(new PayloadTooLargeError('Request body exceeds 10 MB.'));
    const stagePrefix = `/${STAGE}`;
    const inStage = url.pathname === stagePrefix || url.pathname.startsWith(`${stagePrefix}/`);
    const path = inStage ? url.pathname.slice(stagePrefix.length) || '/' : url.pathname;
    const match: PathMatch = inStage ? matchPath(req.method ?? 'GET', path) : { kind: 'not_found' };
    const event = toEvent(req, url, path, body, match, receivedAt);

    if (match.kind === 'route' && match.route.access !== 'public') {
      const methodArn = `arn:aws:execute-api:local:000000000000:local/${STAGE}/${event.httpMethod}${event.resource}`;
      const result = await authorize(event, methodArn);
      const allowed = result.policyDocument.Statement.some((s) => 'Effect' in s && s.Effect === 'Allow');
      // A denied request: API Gateway answers 401 itself; we let the API Lambda say why, with rate-limit headers.
      if (allowed) event.requestContext.authorizer = { ...result.context, principalId: result.principalId };
    }
    return options.api(event, lambdaContext(event.requestContext.requestId));
  }

  return async function listener(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let result: APIGatewayProxyResult;
    try {
      result = await handle(req);
    } catch {
      result = errorResponse(new Error('gateway'));
    }
    res.writeHead(result.statusCode, result.headers as Record<string, string>);
    res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
  };
}

/** The body as text, or null past API Gateway's 10 MB (drained, so the client still gets its answer). */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= GATEWAY_MAX_BODY) chunks.push(chunk);
  }
  return size > GATEWAY_MAX_BODY ? null : Buffer.concat(chunks).toString('utf8');
}

function toEvent(
  req: IncomingMessage,
  url: URL,
  path: string,
  body: string,
  match: PathMatch,
  receivedAt: number,
): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    multiQuery[name] = [...(multiQuery[name] ?? []), value];
  }
  const resource =
    match.kind === 'route' ? match.route.path : match.kind === 'method_not_allowed' ? match.resource : '/{proxy+}';
  const pathParameters =
    match.kind === 'route' ? match.params : match.kind === 'not_found' ? { proxy: path.slice(1) } : null;
  const method = (req.method ?? 'GET').toUpperCase();
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return {
    resource,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: pathParameters && Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    body: body || null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: method,
      identity: {
        sourceIp,
        userAgent: headers['User-Agent'] ?? headers['user-agent'] ?? null,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      stage: STAGE,
      requestId: randomUUID(),
      requestTimeEpoch: receivedAt,
      resourceId: 'local',
      resourcePath: resource,
    },
  };
}

function lambdaContext(requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'sendflow-api',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:sendflow-api',
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/sendflow-api',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 29_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
