// The shared lane's door (DESIGN §4, isolation). An endpoint is slow when an attempt to it took, or has been
// running for, `slowAfterMs` or more; for `slowForMs` after that its jobs go to the slow lane, whose own small
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

export class EndpointGate {
  /** Start times of the attempts in flight, per endpoint. */
  private readonly inFlight = new Map<string, number[]>();
  private readonly slowUntil = new Map<string, number>();
  /** Jobs waiting for an attempt of their endpoint to end. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(
    private readonly policy: LanePolicy,
    private readonly clock: Clock,
  ) {}

  enter(endpoint: string): GateAnswer {
    const now = this.clock.now();
    const starts = this.inFlight.get(endpoint) ?? [];
    if (starts.some((start) => now - start >= this.policy.slowAfterMs)) this.markSlow(endpoint, now);
    const until = this.slowUntil.get(endpoint);
    if (until !== undefined && until > now) return { kind: 'slow' };
    this.slowUntil.delete(endpoint);
    if (starts.length >= this.policy.perEndpoint) return { kind: 'busy' };
    this.inFlight.set(endpoint, [...starts, now]);
    return { kind: 'go', ticket: now };
  }

  /**
   * enter(), waiting while the endpoint is busy for one of its attempts to end, as long as its oldest attempt
   * in flight is younger than `busyWaitMs`: a healthy endpoint's attempts end in milliseconds, so a burst to it
   * flows without going round the queue, while jobs of one that has stopped answering do not hold their batch.
   */
  async enterWhenFree(endpoint: string): Promise<GateAnswer> {
    let answer = this.enter(endpoint);
    while (answer.kind === 'busy') {
      const oldest = Math.min(...(this.inFlight.get(endpoint) ?? [this.clock.now()]));
      const waitMs = oldest + this.policy.busyWaitMs - this.clock.now();
      if (waitMs <= 0) break;
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(endpoint) ?? [];
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        // Timed out: leave the line, so a later leave() wakes a job still waiting.
        const timer = setTimeout(() => {
          const index = queue.indexOf(wake);
          if (index >= 0) queue.splice(index, 1);
          if (queue.length === 0) this.waiting.delete(endpoint);
          resolve();
        }, waitMs);
        queue.push(wake);
        this.waiting.set(endpoint, queue);
      });
      answer = this.enter(endpoint);
    }
    return answer;
  }

  /** Ends the attempt enter() let in; its outcome (none when it was skipped) may mark the endpoint slow. */
  leave(endpoint: string, ticket: number, outcome?: AttemptRecord): void {
    const starts = this.inFlight.get(endpoint) ?? [];
    const index = starts.indexOf(ticket);
    if (index >= 0) starts.splice(index, 1);
    if (starts.length === 0) this.inFlight.delete(endpoint);
    this.observe(endpoint, outcome);
    const next = this.waiting.get(endpoint)?.shift();
    if (this.waiting.get(endpoint)?.length === 0) this.waiting.delete(endpoint);
    next?.();
  }

  /** An outcome seen anywhere (the slow lane too): a slow one keeps the endpoint out of the shared lane. */
  observe(endpoint: string, outcome?: AttemptRecord): void {
    if (outcome && isSlowOutcome(outcome, this.policy)) this.markSlow(endpoint, this.clock.now());
  }

  private markSlow(endpoint: string, now: number): void {
    this.slowUntil.set(endpoint, now + this.policy.slowForMs);
  }
}
