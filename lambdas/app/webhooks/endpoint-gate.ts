// The shared lane's door (DESIGN §4, isolation). An endpoint is slow when enough of its recent observations were
// slow (`slowQuorum` of them, and `slowShare` of all, in `slowWindowMs`): a request that took, or has been running
// for, `slowAfterMs` or more (only the request is timed, never our own writes around it: `timed`); for
// `slowForMs` after that its jobs go to the slow lane,
// whose own concurrency is all slow endpoints can hold. Where the policy gives one (the local runtime, one process
// for every batch), an account may have `perEndpoint` attempts in flight in this worker; past that a job waits for
// one of them to end while they are young (under `busyWaitMs`), and otherwise goes back to the shared lane for a
// moment. So no endpoint can fill the shared lane, and one that starts to hang is found by its attempts in
// flight, without waiting for the time-out.
import type { FailureStreak } from '../../domain/webhooks/auto-disable';
import { isSlowOutcome, type LanePolicy } from '../../domain/webhooks/endpoint-health';
import type { Clock } from '../ports';
import type { AttemptRecord } from './ports';

/** go: attempt it here (then leave()); busy: ask again shortly; slow: send it to the slow lane. */
export type GateAnswer =
  | { readonly kind: 'go'; readonly ticket: number }
  | { readonly kind: 'busy' }
  | { readonly kind: 'slow' };

/** Who an attempt is for: the account holds the share, the endpoint (a webhook) carries the slow mark. */
export interface Door {
  readonly account: string;
  readonly endpoint: string;
}

export class EndpointGate {
  /** Start times of the attempts in flight per account, and of the requests in flight per endpoint. */
  private readonly byAccount = new Map<string, number[]>();
  private readonly byEndpoint = new Map<string, number[]>();
  private readonly slowUntil = new Map<string, number>();
  /** An endpoint's ended attempts seen since `since` (the window's start), and how many of them were slow. */
  private readonly seen = new Map<string, { since: number; all: number; slow: number }>();
  /** Jobs waiting for an attempt of their account to end. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(
    private readonly policy: LanePolicy,
    private readonly clock: Clock,
  ) {}

  enter({ account, endpoint }: Door): GateAnswer {
    const now = this.clock.now();
    if (this.slowNow(endpoint, now)) this.markSlow(endpoint, now);
    const until = this.slowUntil.get(endpoint);
    if (until !== undefined && until > now) return { kind: 'slow' };
    this.slowUntil.delete(endpoint);
    const share = this.byAccount.get(account) ?? [];
    const limit = this.policy.perEndpoint;
    if (limit !== null && share.length >= limit) return { kind: 'busy' };
    this.byAccount.set(account, [...share, now]);
    return { kind: 'go', ticket: now };
  }

  /** Whether an outcome counts as slow (it held its slot slowAfterMs or more). */
  isSlow(outcome: AttemptRecord): boolean {
    return isSlowOutcome(outcome, this.policy);
  }

  /** Whether a webhook's failure streak (as its item shows it) sends it to the slow lane in every container. */
  failing(streak: Pick<FailureStreak, 'since' | 'failures'> | null): boolean {
    const threshold = this.policy.failingDeliveries;
    if (typeof threshold !== 'number' || !streak || streak.failures < threshold) return false;
    return this.clock.now() - streak.since >= (this.policy.failingForMs ?? 0);
  }

  /**
   * enter(), waiting while the account is at its share for one of its attempts to end, as long as its oldest
   * attempt in flight is younger than `busyWaitMs`: healthy attempts end in milliseconds, so a burst flows
   * without going round the queue, while jobs behind an endpoint that stopped answering do not hold a batch.
   */
  async enterWhenFree(door: Door): Promise<GateAnswer> {
    let answer = this.enter(door);
    while (answer.kind === 'busy') {
      const oldest = Math.min(...(this.byAccount.get(door.account) ?? [this.clock.now()]));
      const waitMs = oldest + this.policy.busyWaitMs - this.clock.now();
      if (waitMs <= 0) break;
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(door.account) ?? [];
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        // Timed out: leave the line, so a later leave() wakes a job still waiting.
        const timer = setTimeout(() => {
          const index = queue.indexOf(wake);
          if (index >= 0) queue.splice(index, 1);
          if (queue.length === 0) this.waiting.delete(door.account);
          resolve();
        }, waitMs);
        queue.push(wake);
        this.waiting.set(door.account, queue);
      });
      answer = this.enter(door);
    }
    return answer;
  }

  /** Ends the attempt enter() let in; its outcome (none when it was skipped) may mark the endpoint slow. */
  leave({ account, endpoint }: Door, ticket: number, outcome?: AttemptRecord): void {
    release(this.byAccount, account, ticket);
    this.observe(endpoint, outcome);
    const next = this.waiting.get(account)?.shift();
    if (this.waiting.get(account)?.length === 0) this.waiting.delete(account);
    next?.();
  }

  /**
   * Runs the endpoint's request. While it runs it counts toward the endpoint's slow mark; the time our own writes
   * take (a claim, a record, on a loaded machine) never does.
   */
  async timed<T>(endpoint: string, request: () => Promise<T>): Promise<T> {
    const start = this.clock.now();
    this.byEndpoint.set(endpoint, [...(this.byEndpoint.get(endpoint) ?? []), start]);
    try {
      return await request();
    } finally {
      release(this.byEndpoint, endpoint, start);
    }
  }

  /** An outcome seen anywhere (the slow lane too): enough slow ones keep the endpoint out of the shared lane. */
  observe(endpoint: string, outcome?: AttemptRecord): void {
    if (!outcome) return;
    const now = this.clock.now();
    const seen = this.window(endpoint, now);
    seen.all += 1;
    if (isSlowOutcome(outcome, this.policy)) seen.slow += 1;
    if (this.slowNow(endpoint, now)) this.markSlow(endpoint, now);
  }

  /** The endpoint's observations of the current window (a new one once `slowWindowMs` has passed). */
  private window(endpoint: string, now: number): { since: number; all: number; slow: number } {
    let seen = this.seen.get(endpoint);
    if (!seen || now - seen.since >= (this.policy.slowWindowMs ?? Number.POSITIVE_INFINITY)) {
      seen = { since: now, all: 0, slow: 0 };
      this.seen.set(endpoint, seen);
    }
    return seen;
  }

  /** Whether the window's slow observations (its ended attempts, and requests in flight for slowAfterMs) suffice. */
  private slowNow(endpoint: string, now: number): boolean {
    const inFlight = this.byEndpoint.get(endpoint) ?? [];
    const hanging = inFlight.filter((start) => now - start >= this.policy.slowAfterMs).length;
    const seen = this.seen.get(endpoint);
    const fresh = seen && now - seen.since < (this.policy.slowWindowMs ?? Number.POSITIVE_INFINITY);
    const slow = hanging + (fresh ? seen.slow : 0);
    const all = hanging + (fresh ? seen.all : 0);
    return slow >= (this.policy.slowQuorum ?? 1) && slow >= (this.policy.slowShare ?? 0) * all;
  }

  /** The evidence is spent: after slowForMs the endpoint starts again with a clean window. */
  private markSlow(endpoint: string, now: number): void {
    this.slowUntil.set(endpoint, now + this.policy.slowForMs);
    this.seen.delete(endpoint);
  }
}

function release(inFlight: Map<string, number[]>, key: string, ticket: number): void {
  const starts = inFlight.get(key) ?? [];
  const index = starts.indexOf(ticket);
  if (index >= 0) starts.splice(index, 1);
  if (starts.length === 0) inFlight.delete(key);
}
