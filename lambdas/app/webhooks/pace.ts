// Per-endpoint pacing (issue 18 item 3): the shared pace's port, and the worker's use of it. Each paced job
// first reserves a turn on the shared pace (turns 1.05/N s apart, across every process). A job far from its turn
// goes back to the queue with a delay, carrying its turn (never claimed, so never an attempt, never dead-lettered
// for it); one near its turn waits here, before the claim and outside the lanes' door, so it holds nothing
// another endpoint needs. Right before the request, its start is taken on the shared pace: that check, on the
// time the request really starts, is what guarantees "at most N in any second"; the turns only spare it refusals.
import { type PaceTake, paceSpacingMs } from '../../domain/webhooks/pace';
import type { Clock } from '../ports';

/** The shared record of a paced endpoint's turns and starts (one item per webhook on DynamoDB). */
export interface PaceCounter {
  /**
   * Hands out the endpoint's next turn: the later of its horizon and `now`, the horizon then moving `spacingMs`
   * past it. Atomic across processes: no two jobs get the same turn.
   */
  reserve(webhookId: string, spacingMs: number, now: number): Promise<number>;
  /**
   * A request to `webhookId` starting at `now`: granted (and the next allowed start set `spacingMs` later) when
   * the next allowed start is not after `now`; refused with that start otherwise. Atomic across processes.
   */
  take(webhookId: string, spacingMs: number, now: number): Promise<PaceTake>;
}

export interface PaceOptions {
  /** How long a job may wait here for its turn; a later turn sends it back to the queue. */
  readonly waitInPlaceMs: number;
  /**
   * The queue takes whole seconds of delay only (SQS): a job goes back for the whole seconds before its turn
   * (so it never comes back after it) and waits the rest here.
   */
  readonly wholeSeconds: boolean;
}

/**
 * One process makes every attempt (the local runtime): its queue takes fractional delays, so a job comes back on
 * its turn and waits here only for a late timer.
 */
export const IN_PROCESS_PACE: PaceOptions = { waitInPlaceMs: 50, wholeSeconds: false };

/**
 * SQS (AWS): delays are whole seconds, so a job waits here for the part of its turn under a second; a Lambda
 * instance holds a paced job at most that long.
 */
export const SQS_PACE: PaceOptions = { waitInPlaceMs: 1_000, wholeSeconds: true };

/** What a paced job does now: go on to its attempt, or go back to the queue for `delaySeconds`, keeping `turn`. */
export type PaceAdmission =
  | { readonly kind: 'go' }
  | { readonly kind: 'later'; readonly delaySeconds: number; readonly turn: number };

/** A paced job: its webhook, and the turn it was given before it went back to the queue, if it did. */
export interface PacedJob {
  readonly webhookId: string;
  readonly paceTurn?: number;
}

export type Sleep = (ms: number) => Promise<void>;

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class EndpointPace {
  constructor(
    private readonly counter: PaceCounter,
    private readonly clock: Clock,
    private readonly options: PaceOptions,
    private readonly sleep: Sleep = realSleep,
  ) {}

  /** Before the claim: the job's turn (its own, or a new one), waited for here when it is near. */
  async admit(job: PacedJob, perSecond: number): Promise<PaceAdmission> {
    const spacing = paceSpacingMs(perSecond);
    const turn = job.paceTurn ?? (await this.counter.reserve(job.webhookId, spacing, this.clock.now()));
    const waitMs = turn - this.clock.now();
    const delaySeconds = this.options.wholeSeconds ? Math.floor(waitMs / 1000) : waitMs / 1000;
    if (waitMs <= this.options.waitInPlaceMs || delaySeconds <= 0) {
      if (waitMs > 0) await this.sleep(waitMs);
      return { kind: 'go' };
    }
    return { kind: 'later', delaySeconds, turn };
  }

  /**
   * Right before the request (after the claim): takes the start on the shared counter, waiting for the next
   * allowed one when the request before it started late (the turns are spaced, so such waits are short).
   */
  async start(webhookId: string, perSecond: number): Promise<void> {
    const spacing = paceSpacingMs(perSecond);
    for (;;) {
      const now = this.clock.now();
      const take = await this.counter.take(webhookId, spacing, now);
      if (take.granted) return;
      await this.sleep(Math.max(1, take.nextAt - now));
    }
  }
}
