// The shared lane's door (DESIGN §4, isolation). An endpoint is slow when a request to it took, or has been
// running for, `slowAfterMs` or more (only the request is timed, never our own writes around it: `timed`); for `slowForMs` after that its jobs go to the slow lane, whose own small
// concurrency is all slow endpoints can hold. A healthy endpoint may have `perEndpoint` attempts in flight in
// this worker; past that a job waits for one of them to end while they are young (under `busyWaitMs`), and
// otherwise goes back to the shared lane for a moment. So no endpoint can fill the shared lane, and one that starts to hang is found
// by its oldest attempt in flight, without waiting for the time-out.
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
  /** Jobs waiting for an attempt of their account to end. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(
    private readonly policy: LanePolicy,
    private readonly clock: Clock,
  ) {}

  enter({ account, endpoint }: Door): GateAnswer {
    const now = this.clock.now();
    const mine = this.byEndpoint.get(endpoint) ?? [];
    if (mine.some((start) => now - start >= this.policy.slowAfterMs)) this.markSlow(endpoint, now);
    const until = this.slowUntil.get(endpoint);
    if (until !== undefined && until > now) return { kind: 'slow' };
    this.slowUntil.delete(endpoint);
    const share = this.byAccount.get(account) ?? [];
    if (share.length >= this.policy.perEndpoint) return { kind: 'busy' };
    this.byAccount.set(account, [...share, now]);
    return { kind: 'go', ticket: now };
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

  /** An outcome seen anywhere (the slow lane too): a slow one keeps the endpoint out of the shared lane. */
  observe(endpoint: string, outcome?: AttemptRecord): void {
    if (outcome && isSlowOutcome(outcome, this.policy)) this.markSlow(endpoint, this.clock.now());
  }

  private markSlow(endpoint: string, now: number): void {
    this.slowUntil.set(endpoint, now + this.policy.slowForMs);
  }
}

function release(inFlight: Map<string, number[]>, key: string, ticket: number): void {
  const starts = inFlight.get(key) ?? [];
  const index = starts.indexOf(ticket);
  if (index >= 0) starts.splice(index, 1);
  if (starts.length === 0) inFlight.delete(key);
}
