// Per-endpoint pacing (issue 18 item 3): the shared pace counter's port, and each worker process's line of the
// jobs it holds for a paced webhook. A job far from its turn goes back to the queue with a delay (never claimed,
// so never an attempt, never dead-lettered for it); one near its turn waits here, before the claim and outside
// the lanes' door, so it holds nothing another endpoint needs. The counter, written right before the request
// starts, is what keeps the pace across processes; the line only spares it the writes of jobs bound to be refused.
import { type PaceTake, paceSpacingMs } from '../../domain/webhooks/pace';
import type { Clock } from '../ports';

/** The shared record of a paced endpoint's next allowed start (one item per webhook on DynamoDB). */
export interface PaceCounter {
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

/** What a paced job does now: go on to its attempt, or go back to the queue for `delaySeconds`. */
export type PaceAdmission = { readonly kind: 'go' } | { readonly kind: 'later'; readonly delaySeconds: number };

/** Which job: a delivery's attempt (a job sent back and received again is the same job). */
export interface PacedJob {
  readonly webhookId: string;
  readonly deliveryId: string;
  readonly attempt: number;
}

interface Line {
  /** The latest turn handed out here, and the next start the counter last told of. */
  tail: number;
  known: number;
  /** Turns of jobs sent back to the queue, by job: the job takes its own turn when it comes back. */
  readonly turns: Map<string, number>;
  swept: number;
}

export type Sleep = (ms: number) => Promise<void>;

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Turns of jobs that came back to another process are forgotten this long after they passed. */
const FORGET_TURN_MS = 60_000;

export class EndpointPace {
  private readonly lines = new Map<string, Line>();

  constructor(
    private readonly counter: PaceCounter,
    private readonly clock: Clock,
    private readonly options: PaceOptions,
    private readonly sleep: Sleep = realSleep,
  ) {}

  /** Before the claim: this job's turn in this process's line, waited for here when it is near. */
  async admit(job: PacedJob, perSecond: number): Promise<PaceAdmission> {
    const spacing = paceSpacingMs(perSecond);
    const line = this.line(job.webhookId);
    const now = this.clock.now();
    this.sweep(line, now);
    const key = `${job.deliveryId}#${job.attempt}`;
    const held = line.turns.get(key);
    line.turns.delete(key);
    const turn = Math.max(held ?? Math.max(now, line.tail + spacing), line.known);
    if (held === undefined) line.tail = Math.max(line.tail, turn);
    const waitMs = turn - now;
    const delaySeconds = this.options.wholeSeconds ? Math.floor(waitMs / 1000) : waitMs / 1000;
    if (waitMs <= this.options.waitInPlaceMs || delaySeconds <= 0) {
      if (waitMs > 0) await this.sleep(waitMs);
      return { kind: 'go' };
    }
    line.turns.set(key, turn);
    return { kind: 'later', delaySeconds };
  }

  /**
   * Right before the request (after the claim): takes the start on the shared counter, waiting for the next
   * allowed one while other processes hold the pace (rare: each process's line already spaces its own jobs).
   */
  async start(webhookId: string, perSecond: number): Promise<void> {
    const spacing = paceSpacingMs(perSecond);
    const line = this.line(webhookId);
    for (;;) {
      const now = this.clock.now();
      const take = await this.counter.take(webhookId, spacing, now);
      if (take.granted) {
        line.known = Math.max(line.known, now + spacing);
        return;
      }
      line.known = Math.max(line.known, take.nextAt);
      await this.sleep(Math.max(1, take.nextAt - now));
    }
  }

  private line(webhookId: string): Line {
    let line = this.lines.get(webhookId);
    if (!line) {
      line = { tail: Number.NEGATIVE_INFINITY, known: Number.NEGATIVE_INFINITY, turns: new Map(), swept: 0 };
      this.lines.set(webhookId, line);
    }
    return line;
  }

  /** Forgets, once a second at most, the turns of jobs that went to another process and never came back here. */
  private sweep(line: Line, now: number): void {
    if (now - line.swept < 1_000) return;
    line.swept = now;
    for (const [key, turn] of line.turns) if (turn < now - FORGET_TURN_MS) line.turns.delete(key);
  }
}
