// Long-polls past their account's open polls, refused by the local gateway from memory (issue 28). A thousand polls
// refused together (429, Retry-After 20) come back together 20 s later: refused by the API they cost each a key
// lookup (two store reads), a rate-window write, an API request log write and the whole middleware chain, and the
// burst held the one event loop every tenant shares for a quarter of a second or more. Here a poll of an account
// whose polls are all open is answered before it takes its account's slot or reaches the API, counted in the
// account's rate window (the rate-limit headers are true) and nothing else; and its key is remembered, so the next
// poll of that key is refused without the key lookup at all while the account's polls stay full. A flush of the
// authorizer cache (a key revoked, a plan changed: app/api-keys, app/accounts) forgets every key remembered.
// Like API Gateway's own throttling answers, these refusals are not in the API request log (GET /v1/logs).
import type { APIGatewayProxyResult } from 'aws-lambda';
import { pollLimitError } from '../../app/listen/listen-sessions';
import type { Clock, RateLimitCounter } from '../../app/ports';
import { ClosedWindows, consumeRequest } from '../../app/rate-limit';
import { RateLimitedError } from '../../domain/errors';
import { PLANS, type PlanName } from '../../domain/plans';
import { rateLimitHeaders } from '../../domain/rate-limit';
import { errorResponse } from '../../handlers/http/response';

/** What a refusal needs of the caller: the account and its plan (from the authorizer's answer). */
export interface PollCaller {
  readonly accountId: string;
  readonly plan: PlanName;
}

/** How long a key is remembered at most (as API Gateway's authorizer cache on AWS); a flush forgets it sooner. */
export const REMEMBERED_KEY_MS = 60_000;
/** Keys remembered at most (the oldest first out): a bound, whatever the number of keys that poll. */
export const REMEMBERED_KEYS_MAX = 10_000;

export interface PollRefusalDeps {
  /** The accounts' open polls (the listen use case's, InProcessOpenPolls). */
  readonly openPolls: { count(accountId: string): number };
  /** The accounts' rate windows, as the API counts them. */
  readonly counter: RateLimitCounter;
  readonly clock: Clock;
  /** The authorizer cache's flush count: a key remembered before a flush is forgotten. */
  readonly generation: () => number;
}

export class PollRefusals {
  private readonly remembered = new Map<string, { caller: PollCaller; generation: number; until: number }>();
  private readonly closed = new ClosedWindows();
  /** Each account's last refusal in line: the next takes its turn after it. */
  private readonly lines = new Map<string, Promise<void>>();

  constructor(private readonly deps: PollRefusalDeps) {}

  /** The caller a key (its hash) was refused for, while it is remembered; undefined: authorize it as usual. */
  recall(keyHash: string): PollCaller | undefined {
    const entry = this.remembered.get(keyHash);
    if (!entry) return undefined;
    if (entry.generation === this.deps.generation() && entry.until > this.deps.clock.now()) return entry.caller;
    this.remembered.delete(keyHash);
    return undefined;
  }

  /**
   * The answer to a poll of `caller` when its account's polls are all open (429 listen_polls_exceeded, or the rate
   * limit's 429 once its window is full), its key remembered; undefined when a poll may open (serve it as usual).
   * `generation`: the authorizer cache's when the caller was authorized (a flush since: the key is not remembered).
   */
  async refuse(
    caller: PollCaller,
    keyHash: string | undefined,
    generation: number,
  ): Promise<APIGatewayProxyResult | undefined> {
    const limit = PLANS[caller.plan].listenPolls;
    if (this.deps.openPolls.count(caller.accountId) < limit) {
      if (keyHash) this.remembered.delete(keyHash);
      return undefined;
    }
    if (keyHash && generation === this.deps.generation()) this.remember(keyHash, caller, generation);
    await this.turn(caller.accountId);
    const perSecond = PLANS[caller.plan].requestsPerSecond;
    const decision = await consumeRequest(
      { counter: this.deps.counter, clock: this.deps.clock, closed: this.closed },
      `account:${caller.accountId}`,
      perSecond,
    );
    const error = decision.limited
      ? new RateLimitedError(
          `Rate limit of ${perSecond} requests per second exceeded; retry after ${decision.retryAfter} s.`,
          decision.retryAfter,
        )
      : pollLimitError(limit, caller.plan);
    const answer = errorResponse(error);
    return { ...answer, headers: { ...answer.headers, ...rateLimitHeaders(decision) } };
  }

  /**
   * Waits for the account's turn: one refusal of an account per turn of the event loop (setImmediate), in arrival
   * order. A burst of a thousand polls comes in together; answered at once they would hold the loop every tenant
   * shares for as long as a thousand answers take to write, where in turns other tenants' requests go in between.
   */
  private async turn(accountId: string): Promise<void> {
    const mine = (this.lines.get(accountId) ?? Promise.resolve()).then(
      () => new Promise<void>((resolve) => setImmediate(resolve)),
    );
    this.lines.set(accountId, mine);
    await mine;
    if (this.lines.get(accountId) === mine) this.lines.delete(accountId);
  }

  private remember(keyHash: string, caller: PollCaller, generation: number): void {
    this.remembered.delete(keyHash);
    this.remembered.set(keyHash, { caller, generation, until: this.deps.clock.now() + REMEMBERED_KEY_MS });
    for (const oldest of this.remembered.keys()) {
      if (this.remembered.size <= REMEMBERED_KEYS_MAX) break;
      this.remembered.delete(oldest);
    }
  }
}
