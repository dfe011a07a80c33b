// Work shares kept in this process's memory, one per key (domain/work-share.ts): the local runtime runs every
// tenant's requests in one process over one store thread, so one account's heavy reads (its email listings) run
// here, each waiting while the account's share of the time is spent and charged the time it took.
import type { Clock, WorkShares } from '../../app/ports';
import { charged, creditAt, freshShare, type ShareRule, type ShareState, waitBefore } from '../../domain/work-share';

export interface KeyedWorkSharesOptions {
  readonly clock: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
}

export class KeyedWorkShares implements WorkShares {
  private readonly states = new Map<string, ShareState>();
  private readonly clock: Clock;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly rule: ShareRule,
    options: KeyedWorkSharesOptions,
  ) {
    this.clock = options.clock;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    // Waits until the key's debt is repaid (work done meanwhile by another caller of the key is charged too).
    for (let wait = this.waitOf(key); wait > 0; wait = this.waitOf(key)) await this.sleep(wait);
    const started = this.clock.now();
    try {
      return await work();
    } finally {
      const now = this.clock.now();
      this.states.set(key, charged(this.stateOf(key, started), this.rule, now, now - started));
      this.forgetRested(now);
    }
  }

  /** Keys kept: those still short of their burst. */
  size(): number {
    return this.states.size;
  }

  private waitOf(key: string): number {
    const now = this.clock.now();
    return waitBefore(this.stateOf(key, now), this.rule, now);
  }

  private stateOf(key: string, now: number): ShareState {
    return this.states.get(key) ?? freshShare(this.rule, now);
  }

  /** A key whose credit is whole again is as a new one: dropped, so the map holds only recently busy keys. */
  private forgetRested(now: number): void {
    for (const [key, state] of this.states) {
      if (creditAt(state, this.rule, now) >= this.rule.burstMs) this.states.delete(key);
    }
  }
}
