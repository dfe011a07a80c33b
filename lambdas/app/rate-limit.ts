// Use case: count one request against a subject's one-second window (spec §8, DESIGN §3).
import { counterShards, decide, type RateDecision, type RateWindow, windowAt } from '../domain/rate-limit';
import type { Clock, RateLimitCounter } from './ports';

export interface RateLimitDeps {
  readonly counter: RateLimitCounter;
  readonly clock: Clock;
  /** Windows this process saw over their limit: their later requests are refused without a write. */
  readonly closed?: ClosedWindows;
}

/**
 * The windows this process has seen pass their limit. A window's count only grows, so a window once over its
 * limit refuses every later request of that second: knowing it here is never stale, and it spares the counter
 * item the writes of requests that would be refused anyway (a client hammering past its plan). Only the
 * current second's windows are kept.
 */
export class ClosedWindows {
  private start = -1;
  private closed = new Set<string>();

  has(subject: string, window: RateWindow, limit: number): boolean {
    return window.start === this.start && this.closed.has(`${subject}#${limit}`);
  }

  add(subject: string, window: RateWindow, limit: number): void {
    if (window.start < this.start) return;
    if (window.start > this.start) {
      this.start = window.start;
      this.closed = new Set();
    }
    this.closed.add(`${subject}#${limit}`);
  }
}

/** `subject` is `account:<id>` for keyed requests and `ip:<address>` for the rest. */
export async function consumeRequest(deps: RateLimitDeps, subject: string, limit: number): Promise<RateDecision> {
  const now = deps.clock.now();
  const window = windowAt(now);
  if (deps.closed?.has(subject, window, limit)) return decide(limit + 1, limit, window, now);
  const count = await deps.counter.increment(subject, window, counterShards(limit));
  if (count > limit) deps.closed?.add(subject, window, limit);
  return decide(count, limit, window, now);
}
