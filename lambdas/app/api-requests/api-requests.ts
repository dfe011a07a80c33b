// Use cases of the API request log: record an authenticated request once answered, list an account's newest.
// Bounded twice: entries expire after API_REQUEST_RETENTION_MS (DynamoDB TTL), and a read returns at most
// API_REQUESTS_SHOWN, newest first.
import { NotFoundError } from '../../domain/errors';
import { timeOrderedId } from '../../domain/ids';
import type { Clock, Principal, RandomBytes } from '../ports';
import type { ApiRequestEntry, ApiRequestLog } from './ports';

/** How long an entry is kept. */
export const API_REQUEST_RETENTION_MS = 24 * 60 * 60 * 1000;
/** The most entries one read returns (GET /v1/logs, the dashboard's page). */
export const API_REQUESTS_SHOWN = 100;
/** The characters of a User-Agent kept (the rest is cut): enough to tell an SDK and its version. */
export const USER_AGENT_KEPT = 200;

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
}

export async function recordApiRequest(deps: ApiRequestDeps, caller: Principal, request: AnsweredRequest) {
  const entry: ApiRequestEntry = {
    accountId: caller.accountId,
    mode: caller.mode,
    id: timeOrderedId('req', request.at, deps.random),
    method: request.method,
    path: request.path,
    status: request.status,
    keyId: caller.keyId,
    at: request.at,
    requestId: request.requestId,
    durationMs: request.durationMs,
    ...(request.userAgent ? { userAgent: request.userAgent.slice(0, USER_AGENT_KEPT) } : {}),
    expiresAt: Math.floor((request.at + API_REQUEST_RETENTION_MS) / 1000),
  };
  await deps.apiRequests.record(entry);
}

export function listApiRequests(
  deps: Pick<ApiRequestDeps, 'apiRequests' | 'clock'>,
  caller: Pick<Principal, 'accountId' | 'mode'>,
  limit = API_REQUESTS_SHOWN,
  before?: string,
): Promise<ApiRequestEntry[]> {
  return deps.apiRequests.recent(
    caller.accountId,
    caller.mode,
    Math.min(limit, API_REQUESTS_SHOWN + 1),
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
