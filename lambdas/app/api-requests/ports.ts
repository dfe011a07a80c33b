// Port of the account's recent API requests (the dashboard's "API requests" page and GET /v1/logs).
import type { Mode } from '../../domain/api-keys';

/** One authenticated API request as answered: never its Authorization value, headers or bodies. */
export interface ApiRequestEntry {
  readonly accountId: string;
  readonly mode: Mode;
  /** Time-ordered (`req_` + time + random): newest first is descending id order. */
  readonly id: string;
  readonly method: string;
  /** Below the stage, without the query string, e.g. `/emails/em_1`. */
  readonly path: string;
  readonly status: number;
  /** The key's id (key_…); the dashboard shows its hint from the key list. */
  readonly keyId: string;
  /** Epoch ms when the request arrived. */
  readonly at: number;
  readonly requestId: string;
  readonly durationMs: number;
  /** TTL, epoch seconds. */
  readonly expiresAt: number;
}

export interface ApiRequestLog {
  /** One small PutItem (about 200 bytes: 1 WRU). */
  record(entry: ApiRequestEntry): Promise<void>;
  /** The newest entries of an account and mode, newest first, at most `limit`, unexpired at `nowMs`. */
  recent(accountId: string, mode: Mode, limit: number, nowMs: number): Promise<ApiRequestEntry[]>;
}
