// The per-IP window of requests without a valid key, counted in this process's memory: an unknown or malformed
// key must never cost a DynamoDB write (DESIGN §3). Locally one process sees every request, so the count is
// exact; on AWS the WAF's rate-based rules are the limit and a container's count can only be lower.
import type { RateLimitCounter } from '../../app/ports';
import type { RateWindow } from '../../domain/rate-limit';

export class InMemoryRateLimitCounter implements RateLimitCounter {
  /** Counts of the current window only: windows are aligned for every subject, so a new one starts afresh. */
  private window = -1;
  private counts = new Map<string, number>();

  async increment(subject: string, window: RateWindow): Promise<number> {
    if (window.start !== this.window) {
      // A late request of a past window (a clock step) counts in the current one rather than resurrecting it.
      if (window.start < this.window) return this.add(subject);
      this.window = window.start;
      this.counts = new Map();
    }
    return this.add(subject);
  }

  private add(subject: string): number {
    const count = (this.counts.get(subject) ?? 0) + 1;
    this.counts.set(subject, count);
    return count;
  }
}
