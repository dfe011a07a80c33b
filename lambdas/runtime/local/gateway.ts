// The local API Gateway: node:http in, REST API proxy events out. Like API Gateway it strips the stage,
// matches the manifest's resources, runs the REQUEST authorizer (with its result cache), then the API Lambda.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import type { KeyedSlots } from '../../adapters/in-process/keyed-slots';
import { ADMIN_FLUSH_PATH, ADMIN_TOKEN_HEADER } from '../../adapters/local/runtime-authorizer-cache';
import { bearerToken, hashApiKey, parseApiKey } from '../../domain/api-keys';
import { errorBody } from '../../domain/error-names';
import { PayloadTooLargeError } from '../../domain/errors';
import { allows } from '../../domain/scopes';
import { fromAuthorizerContext } from '../../handlers/authorizer-context';
import { errorResponse, json } from '../../handlers/http/response';
import { matchPath, type PathMatch } from '../../handlers/http/routing';
import { headerValue } from '../../handlers/middleware/caller';
import { type RouteSpec, STAGE } from '../../manifest';
import type { PollCaller, PollRefusals } from './poll-refusals';
import { inAccountLane, inCallerLane } from './request-lane';

export type Authorizer = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;
export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** How many keys the cache holds at most; the least recently used goes first. */
export const AUTH_CACHE_MAX_ENTRIES = 10_000;

/**
 * API Gateway's authorizer result cache, flushable like the real one, with three differences that close holes
 * the real one leaves to its TTL: it is keyed by the key itself (a hash of the bearer token), so the spellings
 * of one Authorization header share one entry and one flush; a flush wins every race with a lookup in flight (a
 * result computed before it is never stored after it); and it holds only Allow answers, at most `maxEntries`.
 */
export class AuthorizerResultCache {
  private readonly entries = new Map<string, { result: APIGatewayAuthorizerResult; expires: number }>();
  /** Counts flushes: a lookup started in an earlier generation may not store its result. */
  private flushes = 0;

  constructor(private readonly maxEntries = AUTH_CACHE_MAX_ENTRIES) {}

  /** The entry key of an Authorization header, or undefined when it carries no well-formed key (never cached). */
  static keyOf(authorization: string | undefined): string | undefined {
    const token = bearerToken(authorization);
    return token && parseApiKey(token) ? hashApiKey(token) : undefined;
  }

  get(key: string, now: number): APIGatewayAuthorizerResult | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (hit.expires <= now) return undefined;
    this.entries.set(key, hit); // most recently used: last in the Map's order
    return hit.result;
  }

  /** Taken before a lookup starts, and handed back to set(). */
  get generation(): number {
    return this.flushes;
  }

  /** Stores an Allow answer unless the cache was flushed since the lookup that computed it began. */
  set(key: string, result: APIGatewayAuthorizerResult, expires: number, generation: number): void {
    if (generation !== this.flushes || !isAllow(result)) return;
    this.entries.delete(key);
    this.entries.set(key, { result, expires });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  flush(): void {
    this.flushes++;
    this.entries.clear();
  }
}

const isAllow = (result: APIGatewayAuthorizerResult) =>
  result.policyDocument.Statement.some((s) => 'Effect' in s && s.Effect === 'Allow');

export interface GatewayOptions {
  readonly authorizer: Authorizer;
  readonly cache: AuthorizerResultCache;
  readonly api: ApiHandler;
  readonly authCacheTtlSeconds: number;
  readonly clock: () => number;
  /** SF_MAX_BODY_BYTES: the gateway refuses larger bodies (413) before buffering them, on every route. */
  readonly maxBodyBytes: number;
  /** SF_MAX_SEND_BODY_BYTES: the same for routes marked `largeBody` (the send routes); maxBodyBytes if absent. */
  readonly maxSendBodyBytes?: number;
  /** A body that sends nothing for this long is cut with 408 (a slow-drip client holds no socket for long). */
  readonly bodyIdleTimeoutMs: number;
  /**
   * The local stand-in for FlushStageAuthorizersCache: POST ADMIN_FLUSH_PATH from a loopback address with
   * this token in ADMIN_TOKEN_HEADER flushes the cache (the admin CLI reads it from the state file); anything
   * else there is a 404, as any unknown path.
   */
  readonly adminToken?: string;
  /** Each account's requests run through these (KeyedSlots): one tenant's burst takes a bounded share. */
  readonly accountSlots?: KeyedSlots;
  /** Long-polls past their account's open polls, refused from memory before its slot (poll-refusals.ts). */
  readonly pollRefusals?: Pick<PollRefusals, 'recall' | 'refuse'>;
}

export interface GatewayTimeouts {
  /** The whole request (headers and body) must arrive within this (node's requestTimeout): else 408. */
  readonly requestTimeoutMs: number;
  /** The headers must arrive within this (node's headersTimeout, at most requestTimeoutMs). */
  readonly headersTimeoutMs: number;
}

/** Longer than clients keep idle sockets (undici: 4 s), so a client never reuses one we are closing. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** The gateway's HTTP server, with the time-outs node:http leaves lax by default (requests: 300 s). */
export function createGatewayServer(
  listener: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  timeouts: GatewayTimeouts,
): Server {
  const server = createServer(
    {
      requestTimeout: timeouts.requestTimeoutMs,
      headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
      // How often node checks those two (default 30 s, which would let a 1 s time-out run to 30 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    (req, res) => void listener(req, res),
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}

/** A gateway answer; `close` ends the connection after it (the request's body was not read to its end). */
type Answer = APIGatewayProxyResult & { close?: boolean };

/** The "answer" of a request dropped because its client left: never written (the listener finds no one to tell). */
const ABANDONED: Answer = { statusCode: 499, body: '', close: true };

export function createGateway(options: GatewayOptions) {
  const { cache } = options;

  /** The identity source (the Authorization header, any casing), cached by the key it carries. */
  async function authorize(event: APIGatewayProxyEvent, methodArn: string, authorization: string) {
    const key = options.authCacheTtlSeconds > 0 ? AuthorizerResultCache.keyOf(authorization) : undefined;
    const hit = key && cache.get(key, options.clock());
    if (hit) return hit;
    const generation = cache.generation;
    // The key's lookups take their turns in the key's lane (a malformed one: the client address's).
    const lane = AuthorizerResultCache.keyOf(authorization) ?? `ip:${event.requestContext.identity.sourceIp}`;
    const result = await inCallerLane(lane, () =>
      options.authorizer({
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
      } as APIGatewayRequestAuthorizerEvent),
    );
    if (key) cache.set(key, result, options.clock() + options.authCacheTtlSeconds * 1000, generation);
    return result;
  }

  /** `left`: whether the client has gone (its connection closed): nothing is answered to it any more. */
  async function handle(req: IncomingMessage, left: () => boolean): Promise<Answer> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const requestId = randomUUID();
    if (url.pathname === ADMIN_FLUSH_PATH && isAdmin(req, options.adminToken)) {
      cache.flush();
      return { statusCode: 204, headers: { 'X-Request-Id': requestId }, body: '' };
    }
    const stagePrefix = `/${STAGE}`;
    const inStage = url.pathname === stagePrefix || url.pathname.startsWith(`${stagePrefix}/`);
    const path = inStage ? url.pathname.slice(stagePrefix.length) || '/' : url.pathname;
    const match: PathMatch = inStage ? matchPath(req.method ?? 'GET', path) : { kind: 'not_found' };
    // Refused by its declared size before a byte of it is read, as API Gateway refuses past its 10 MB.
    const maxBytes = limitOf(match);
    const declared = Number(req.headers['content-length']);
    if (declared > maxBytes) return gatewayError(tooLarge(maxBytes), requestId);
    // A long-poll of a key remembered refused (its account has every poll open): answered from memory, before the
    // event is built or the key looked up (poll-refusals.ts).
    const refusals = match.kind === 'route' && match.route.longPoll ? options.pollRefusals : undefined;
    const pollKey = refusals ? authorizationOf(req) : undefined;
    const keyHash = pollKey ? AuthorizerResultCache.keyOf(pollKey) : undefined;
    const known = keyHash ? refusals?.recall(keyHash) : undefined;
    if (known) {
      const early = await inAccountLane(known.accountId, () => refusals?.refuse(known, keyHash, cache.generation));
      if (early) return withRequestId(early, requestId);
    }
    const event = toEvent(req, url, path, match, requestId);

    // A request without the identity source never reaches the authorizer or its cache: API Gateway answers
    // 401 itself; the API Lambda does that here, with rate-limit headers (it finds no key).
    const key = headerValue(event.headers, 'authorization');
    let readable = match.kind === 'route' && match.route.access === 'public';
    let account: string | undefined;
    if (match.kind === 'route' && match.route.access !== 'public' && key) {
      const generation = cache.generation;
      const methodArn = `arn:aws:execute-api:local:000000000000:local/${STAGE}/${event.httpMethod}${event.resource}`;
      const result = await authorize(event, methodArn, key);
      const allowed = isAllow(result);
      // A denied request: API Gateway answers 401 itself; we let the API Lambda say why, with rate-limit headers.
      if (allowed) event.requestContext.authorizer = { ...result.context, principalId: result.principalId };
      readable = allowed;
      if (allowed && typeof result.context?.accountId === 'string') account = result.context.accountId;
      // A long-poll of an account with every poll open: refused here, before its slot (and its key remembered).
      const caller = refusals && account ? pollCaller(result, match.route.access) : undefined;
      const refused =
        caller && (await inAccountLane(caller.accountId, () => refusals?.refuse(caller, keyHash, generation)));
      if (refused) return withRequestId(refused, requestId);
    }
    // Arrival is stamped (requestTimeEpoch) before an account's request waits for its turn. Every request of the
    // account runs in its slots, long-polls too: a poll gives its slot back while it waits (KeyedSlots.outside),
    // so a listening CLI never stalls the account's other requests, and a burst of polls takes its turn like any.
    const slots = options.accountSlots;
    if (!account) return serve(req, event, readable, requestId, maxBytes);
    // The account's request: its store calls, however deep, take their turns in its lane (request-lane.ts). One
    // whose client left while it waited for its turn is dropped then: no work for nobody, and the turn goes on at
    // once (else it would wait for a body that never comes, holding the slot until the body's idle time-out).
    const served = () =>
      left()
        ? Promise.resolve(ABANDONED)
        : inAccountLane(account, () => serve(req, event, readable, requestId, maxBytes));
    return slots ? slots.run(account, served) : served();
  }

  /** The body limit of the matched route: the send routes take attachments (largeBody). */
  function limitOf(match: PathMatch): number {
    const large = match.kind === 'route' && (match.route as RouteSpec).largeBody === true;
    return large ? (options.maxSendBodyBytes ?? options.maxBodyBytes) : options.maxBodyBytes;
  }

  async function serve(
    req: IncomingMessage,
    event: APIGatewayProxyEvent,
    readable: boolean,
    requestId: string,
    maxBytes: number,
  ): Promise<Answer> {
    // Only a request that will be served has its body read: a refused one (401, 404, 405) is answered
    // from its headers, and its connection closed rather than drained.
    if (readable) {
      const body = await readBody(req, maxBytes, options.bodyIdleTimeoutMs);
      if (body === TOO_LARGE) return gatewayError(tooLarge(maxBytes), requestId);
      if (body === IDLE) return { ...timedOut(options.bodyIdleTimeoutMs, requestId), close: true };
      event.body = body || null;
    }
    return options.api(event, lambdaContext(requestId));
  }

  return async function listener(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let result: Answer;
    try {
      result = await handle(req, () => res.destroyed);
    } catch {
      result = errorResponse(new Error('gateway'));
    }
    if (res.destroyed) return; // the client left, or a node time-out already answered 408 and closed
    try {
      write(res, result, result.close || !req.complete);
    } catch {
      // An answer node refuses to write (an invalid header): a 500, never a crash of the process.
      if (!res.headersSent) write(res, errorResponse(new Error('gateway: unwritable answer')), true);
      else res.destroy();
    }
  };
}

function write(res: ServerResponse, result: Answer, close: boolean): void {
  // As API Gateway: `multiValueHeaders` beside `headers` (several Set-Cookie headers), a name in both getting all.
  const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    const own = headers[name];
    headers[name] = [...(own === undefined ? [] : [own].flat()), ...values.map(String)];
  }
  if (close) headers.Connection = 'close';
  res.writeHead(result.statusCode, headers);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/**
 * The caller of an authorized long-poll as a refusal needs it, when its key may make the call (a key without the
 * route's scope is the API's to refuse, 403); undefined otherwise.
 */
function pollCaller(result: APIGatewayAuthorizerResult, access: RouteSpec['access']): PollCaller | undefined {
  const principal = fromAuthorizerContext(result.context);
  if (!principal || access === 'public' || !allows(access, principal.scopes)) return undefined;
  return { accountId: principal.accountId, plan: principal.plan };
}

/** The Authorization header as the event's `headers` give it (the last of a spelling), without building the event. */
function authorizationOf(req: IncomingMessage): string | undefined {
  const single = new Map<string, string>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') single.set(name, req.rawHeaders[i + 1] as string);
  }
  return single.size ? headerValue(Object.fromEntries(single), 'authorization') : undefined;
}

const withRequestId = (answer: APIGatewayProxyResult, requestId: string): Answer => ({
  ...answer,
  headers: { ...answer.headers, 'X-Request-Id': requestId },
});

function isAdmin(req: IncomingMessage, token: string | undefined): boolean {
  const given = req.headers[ADMIN_TOKEN_HEADER];
  if (!token || req.method !== 'POST' || typeof given !== 'string') return false;
  const address = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  if (!(address === '::1' || address.startsWith('127.'))) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** API Gateway's own answers (gateway responses): the one error shape, no rate-limit headers. */
function gatewayError(error: Error, requestId: string): Answer {
  const response = errorResponse(error);
  return { ...response, headers: { ...response.headers, 'X-Request-Id': requestId }, close: true };
}

const tooLarge = (max: number) => new PayloadTooLargeError(`Request body exceeds ${max} bytes.`);

function timedOut(idleMs: number, requestId: string): APIGatewayProxyResult {
  return json(
    408,
    errorBody({ message: `The request body sent nothing for ${idleMs} ms.`, status: 408, code: 'request_timeout' }),
    { 'X-Request-Id': requestId },
  );
}

const TOO_LARGE = Symbol('too large');
const IDLE = Symbol('idle');

/**
 * The body as text; TOO_LARGE as soon as it passes `max` bytes, IDLE when no byte came for `idleMs`. Reading
 * stops there (the connection is then closed), so a chunked body without a declared length is never buffered
 * past the limit, and a body sent a byte at a time cannot hold the socket between bytes for long.
 */
function readBody(req: IncomingMessage, max: number, idleMs: number): Promise<string | typeof TOO_LARGE | typeof IDLE> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let idle = setTimeout(() => stop(IDLE), idleMs);
    const cleanUp = () => {
      clearTimeout(idle);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const stop = (value: string | typeof TOO_LARGE | typeof IDLE) => {
      cleanUp();
      if (typeof value !== 'string') req.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return stop(TOO_LARGE);
      chunks.push(chunk);
      clearTimeout(idle);
      idle = setTimeout(() => stop(IDLE), idleMs);
    };
    const onEnd = () => stop(Buffer.concat(chunks).toString('utf8'));
    const onError = (error: Error) => {
      cleanUp();
      reject(error);
    };
    const onClose = () => onError(new Error('the client closed the request before its body ended'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

function toEvent(
  req: IncomingMessage,
  url: URL,
  path: string,
  match: PathMatch,
  requestId: string,
): APIGatewayProxyEvent {
  // Built through Maps and Object.fromEntries, as JSON.parse builds the event on AWS: a name like `__proto__`
  // or `constructor` is an own data property, never a prototype lookup or a prototype change.
  const single = new Map<string, string>();
  const multi = new Map<string, string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    single.set(name, value);
    multi.set(name, [...(multi.get(name) ?? []), value]);
  }
  const singleQuery = new Map<string, string>();
  const multiQuery = new Map<string, string[]>();
  for (const [name, value] of url.searchParams) {
    singleQuery.set(name, value);
    multiQuery.set(name, [...(multiQuery.get(name) ?? []), value]);
  }
  const headers = Object.fromEntries(single);
  const multiValueHeaders = Object.fromEntries(multi);
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
    queryStringParameters: singleQuery.size ? Object.fromEntries(singleQuery) : null,
    multiValueQueryStringParameters: multiQuery.size ? Object.fromEntries(multiQuery) : null,
    pathParameters: pathParameters && Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: method,
      identity: {
        sourceIp,
        userAgent: headerValue(headers, 'user-agent') ?? null,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      stage: STAGE,
      requestId,
      // When the request arrived, as API Gateway stamps it: before the body is read.
      requestTimeEpoch: Date.now(),
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
