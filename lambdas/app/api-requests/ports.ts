// Port of the account's recent API requests (the dashboard's "API requests" page and GET /v1/logs).
import type { Mode } from '../../domain/api-keys';

/**
 * One authenticated API request as answered: never its Authorization value or other headers; its query and
 * bodies only as the redaction rule leaves them (domain/request-log-bodies), bounded.
 */
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
  /** The manifest route it matched, e.g. `/emails/{id}`; absent for an unmatched path (and on earlier entries). */
  readonly route?: string;
  /** Its query string, secrets removed; absent without one (and on earlier entries). */
  readonly query?: string;
  /** The request's body as JSON text, redacted and bounded; absent without one (and on earlier entries). */
  readonly requestBody?: string;
  /** The response's body as JSON text, redacted and bounded; absent without one (and on earlier entries). */
  readonly responseBody?: string;
  /** TTL, epoch seconds. */
  readonly expiresAt: number;
}

/** Which requests a search returns: every given condition holds (none given: all). */
export interface ApiRequestFilter {
  /** Status codes from `[0]` to `[1]`, inclusive: `[400, 499]` for 4xx, `[422, 422]` for one code. */
  readonly status?: readonly [number, number];
  readonly method?: string;
  /** A manifest route, e.g. `/emails/{id}`. */
  readonly route?: string;
  readonly keyId?: string;
  /** Epoch ms: requests that arrived at or after. */
  readonly since?: number;
  /** Epoch ms: requests that arrived before. */
  readonly until?: number;
}

export interface ApiRequestPage {
  /** Matching entries, newest first, at most the limit asked. */
  readonly entries: ApiRequestEntry[];
  /**
   * Where the next page starts (pass it as `before`): older matches may remain. Not always a returned entry's
   * id: a filtered page reads a bounded number of entries, and may stop short of the limit.
   */
  readonly next: string | null;
}

export interface ApiRequestLog {
  /**
   * One PutItem (at most 1 KB for a 2xx/3xx: 1 WRU; a 4xx/5xx with its bodies up to 8 KB), and for a 4xx/5xx
   * one more small PutItem in its status class's index (1 WRU).
   */
  record(entry: ApiRequestEntry): Promise<void>;
  /**
   * The newest entries of an account and mode, newest first, at most `limit`, unexpired at `nowMs`; with `before`
   * (an entry id), only those older than it. As `search` without a filter: no query or bodies.
   */
  recent(accountId: string, mode: Mode, limit: number, nowMs: number, before?: string): Promise<ApiRequestEntry[]>;
  /**
   * A page of the entries of an account and mode that match `filter`, unexpired at `nowMs`, older than `before`
   * when given, as a list shows them: without query and bodies (`get` has them). Reads a bounded number of
   * entries per page, never the whole log.
   */
  search(
    accountId: string,
    mode: Mode,
    filter: ApiRequestFilter,
    limit: number,
    nowMs: number,
    before?: string,
  ): Promise<ApiRequestPage>;
  /** One entry of an account and mode by id; null when there is none (or it expired at `nowMs`). */
  get(accountId: string, mode: Mode, id: string, nowMs: number): Promise<ApiRequestEntry | null>;
}
