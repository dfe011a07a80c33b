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
  /** The request's User-Agent, cut to USER_AGENT_KEPT characters; absent without one (and on earlier entries). */
  readonly userAgent?: string;
  /** TTL, epoch seconds. */
  readonly expiresAt: number;
}

export interface ApiRequestLog {
  /** One small PutItem (about 200 bytes: 1 WRU). */
  record(entry: ApiRequestEntry): Promise<void>;
  /**
   * The newest entries of an account and mode, newest first, at most `limit`, unexpired at `nowMs`; with `before`
   * (an entry id), only those older than it.
   */
  recent(accountId: string, mode: Mode, limit: number, nowMs: number, before?: string): Promise<ApiRequestEntry[]>;
  /** One entry of an account and mode by id; null when there is none (or it expired at `nowMs`). */
  get(accountId: string, mode: Mode, id: string, nowMs: number): Promise<ApiRequestEntry | null>;
}
