// Use cases of the API request log: record an authenticated request once answered (its query and bodies
// redacted and bounded), search an account's newest by status, method, route, key and time, read one.
// Bounded twice: entries expire after API_REQUEST_RETENTION_MS (DynamoDB TTL), and a read returns at most
// API_REQUESTS_SHOWN, newest first.
import { NotFoundError } from '../../domain/errors';
import { timeOrderedId } from '../../domain/ids';
import { redactQuery, redactText, storedBody } from '../../domain/request-log-bodies';
import type { Clock, Principal, RandomBytes } from '../ports';
import type { ApiRequestEntry, ApiRequestFilter, ApiRequestLog, ApiRequestPage } from './ports';

/** How long an entry is kept. */
export const API_REQUEST_RETENTION_MS = 24 * 60 * 60 * 1000;
/** The most entries one read returns (GET /v1/logs, the dashboard's page). */
export const API_REQUESTS_SHOWN = 100;
/** The characters of a User-Agent kept (the rest is cut): enough to tell an SDK and its version. */
export const USER_AGENT_KEPT = 200;
/** The characters of a query string kept. */
export const QUERY_KEPT = 200;
/**
 * The most bytes an entry takes, bodies included (DynamoDB's item size: names and values). A 2xx/3xx entry stays
 * within 1 KB, one WRU like an entry without bodies, its bodies cut to the room left; a 4xx/5xx, which someone
 * will want to diagnose, keeps up to 8 KB (8 WRU at most; a typical 422 is 1–2 KB: 2 WRU).
 */
export const ENTRY_BYTES = { success: 1_000, failure: 8_000 } as const;
/** The partition key attribute (`tenant`: account#mode#shard) and DynamoDB's per-attribute overhead, rounded up. */
const KEY_AND_OVERHEAD_BYTES = 64;

export interface ApiRequestDeps {
  readonly apiRequests: ApiRequestLog;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

export interface AnsweredRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly requestId: string;
  /** Epoch ms when the request arrived. */
  readonly at: number;
  readonly durationMs: number;
  readonly userAgent?: string;
  /** The manifest route it matched (e.g. `/emails/{id}`). */
  readonly route?: string;
  readonly query?: Readonly<Record<string, string>>;
  /** The request's body: its parsed JSON, or its text when it is not JSON. */
  readonly requestBody?: unknown;
  /** The response's body: its parsed JSON, or its text when it is not JSON. */
  readonly responseBody?: unknown;
}

/** DynamoDB's size of an item's attributes (numbers at their 21-byte most), as the entry's budget counts it. */
export function entryBytes(entry: object): number {
  let bytes = KEY_AND_OVERHEAD_BYTES;
  for (const [name, value] of Object.entries(entry)) {
    if (value === undefined) continue;
    bytes += Buffer.byteLength(name) + (typeof value === 'number' ? 21 : Buffer.byteLength(String(value)));
  }
  return bytes;
}

/** The entry of an answered request: its bodies redacted and fitted into what its status class may take. */
export function entryOf(caller: Principal, request: AnsweredRequest, id: string): ApiRequestEntry {
  const query = request.query ? redactQuery(request.query)?.slice(0, QUERY_KEPT) : undefined;
  const base: ApiRequestEntry = {
    accountId: caller.accountId,
    mode: caller.mode,
    id,
    method: request.method,
    path: redactText(request.path),
    status: request.status,
    keyId: caller.keyId,
    at: request.at,
    requestId: request.requestId,
    durationMs: request.durationMs,
    ...(request.userAgent ? { userAgent: request.userAgent.slice(0, USER_AGENT_KEPT) } : {}),
    ...(request.route ? { route: request.route } : {}),
    ...(query ? { query } : {}),
    expiresAt: Math.floor((request.at + API_REQUEST_RETENTION_MS) / 1000),
  };
  const limit = request.status >= 400 ? ENTRY_BYTES.failure : ENTRY_BYTES.success;
  const names = Buffer.byteLength('requestBody') + Buffer.byteLength('responseBody');
  const room = limit - entryBytes(base) - names;
  // The request's body takes up to half the room, the response's what is left.
  const requestBody = storedBody(request.requestBody, Math.floor(room / 2));
  const responseBody = storedBody(request.responseBody, room - Buffer.byteLength(requestBody ?? ''));
  return {
    ...base,
    ...(requestBody !== undefined ? { requestBody } : {}),
    ...(responseBody !== undefined ? { responseBody } : {}),
  };
}

export async function recordApiRequest(deps: ApiRequestDeps, caller: Principal, request: AnsweredRequest) {
  await deps.apiRequests.record(entryOf(caller, request, timeOrderedId('req', request.at, deps.random)));
}

/** The caller's newest requests matching `filter`, a page at most `limit` long, older than `before` if given. */
export function searchApiRequests(
  deps: Pick<ApiRequestDeps, 'apiRequests' | 'clock'>,
  caller: Pick<Principal, 'accountId' | 'mode'>,
  filter: ApiRequestFilter,
  limit = API_REQUESTS_SHOWN,
  before?: string,
): Promise<ApiRequestPage> {
  return deps.apiRequests.search(
    caller.accountId,
    caller.mode,
    filter,
    Math.min(limit, API_REQUESTS_SHOWN),
    deps.clock.now(),
    before,
  );
}

/** One entry of the caller's account and mode; 404 when there is none (another tenant's is none). */
export async function getApiRequest(
  deps: Pick<ApiRequestDeps, 'apiRequests' | 'clock'>,
  caller: Pick<Principal, 'accountId' | 'mode'>,
  id: string,
): Promise<ApiRequestEntry> {
  const found = /^req_[0-9a-z]{26}$/.test(id)
    ? await deps.apiRequests.get(caller.accountId, caller.mode, id, deps.clock.now())
    : null;
  if (!found) throw new NotFoundError(`No logged request with id ${id}.`);
  return found;
}

/** Whether `entry` meets every condition of `filter` (the rule each adapter's query carries out). */
export function matchesFilter(entry: ApiRequestEntry, filter: ApiRequestFilter): boolean {
  return (
    (!filter.status || (entry.status >= filter.status[0] && entry.status <= filter.status[1])) &&
    (!filter.method || entry.method === filter.method) &&
    (!filter.route || entry.route === filter.route) &&
    (!filter.keyId || entry.keyId === filter.keyId) &&
    (filter.since === undefined || entry.at >= filter.since) &&
    (filter.until === undefined || entry.at < filter.until)
  );
}
