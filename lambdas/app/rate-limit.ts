// Use case: count one request against a subject's one-second window (spec §8, DESIGN §3).
import { decide, type RateDecision, windowAt } from '../domain/rate-limit';
import type { Clock, RateLimitCounter } from './ports';

export interface RateLimitDeps {
  readonly counter: RateLimitCounter;
  readonly clock: Clock;
}

/** `subject` is `account:<id>` for keyed requests and `ip:<address>` for the rest. */
export async function consumeRequest(deps: RateLimitDeps, subject: string, limit: number): Promise<RateDecision> {
  const now = deps.clock.now();
  const window = windowAt(now);
  const count = await deps.counter.increment(subject, window);
  return decide(count, limit, window, now);
}
