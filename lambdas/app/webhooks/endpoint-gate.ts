// The shared lane's door (DESIGN §4, isolation): at most `perEndpoint` attempts per endpoint in flight in this
// worker, and none from an endpoint that was slow in the last `slowForMs`. A job turned away goes to the slow
// lane, whose own small concurrency is all a hanging endpoint can hold; other endpoints keep the shared lane.
import { isSlowOutcome, type LanePolicy } from '../../domain/webhooks/endpoint-health';
import type { Clock } from '../ports';
import type { AttemptRecord } from './ports';

export class EndpointGate {
  private readonly inFlight = new Map<string, number>();
  private readonly slowUntil = new Map<string, number>();

  constructor(
    private readonly policy: LanePolicy,
    private readonly clock: Clock,
  ) {}

  /** True: attempt it here, then call leave(). False: send it to the slow lane. */
  enter(endpoint: string): boolean {
    const until = this.slowUntil.get(endpoint);
    if (until !== undefined) {
      if (until > this.clock.now()) return false;
      this.slowUntil.delete(endpoint);
    }
    const count = this.inFlight.get(endpoint) ?? 0;
    if (count >= this.policy.perEndpoint) return false;
    this.inFlight.set(endpoint, count + 1);
    return true;
  }

  /** Ends an attempt let in by enter(); its outcome (none when it was skipped) may mark the endpoint slow. */
  leave(endpoint: string, outcome?: AttemptRecord): void {
    const count = (this.inFlight.get(endpoint) ?? 1) - 1;
    if (count > 0) this.inFlight.set(endpoint, count);
    else this.inFlight.delete(endpoint);
    this.observe(endpoint, outcome);
  }

  /** An outcome seen anywhere (the slow lane too): a slow one keeps the endpoint out of the shared lane. */
  observe(endpoint: string, outcome?: AttemptRecord): void {
    if (outcome && isSlowOutcome(outcome, this.policy)) {
      this.slowUntil.set(endpoint, this.clock.now() + this.policy.slowForMs);
    }
  }
}
