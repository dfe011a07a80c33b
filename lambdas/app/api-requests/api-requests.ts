// Use cases of the API request log: record an authenticated request once answered, list an account's newest.
// Bounded twice: entries expire after API_REQUEST_RETENTION_MS (DynamoDB TTL), and a read returns at most
// API_REQUESTS_SHOWN, newest first.
import { timeOrderedId } from '../../domain/ids';
import type { Clock, Principal, RandomBytes } from '../ports';
import type { ApiRequestEntry, ApiRequestLog } from './ports';

/** How long an entry is kept. */
export const API_REQUEST_RETENTION_MS = 24 * 60 * 60 * 1000;
/** The most entries one read returns (GET /v1/logs, the dashboard's page). */
export const API_REQUESTS_SHOWN = 100;

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
    expiresAt: Math.floor((request.at + API_REQUEST_RETENTION_MS) / 1000),
  };
  await deps.apiRequests.record(entry);
}

export function listApiRequests(
  deps: Pick<ApiRequestDeps, 'apiRequests' | 'clock'>,
  caller: Pick<Principal, 'accountId' | 'mode'>,
  limit = API_REQUESTS_SHOWN,
): Promise<ApiRequestEntry[]> {
  return deps.apiRequests.recent(caller.accountId, caller.mode, Math.min(limit, API_REQUESTS_SHOWN), deps.clock.now());
}
