// The slow lane's fair order (DESIGN §4, isolation; issue 29, item 4). The slow lane's queue hands out its oldest
// ready messages first, so what decides who is served while it is behind is the order its jobs become ready in. Each
// job that enters the lane (a move from the shared lane, the retry of a slow attempt) therefore gets a wait from its
// tenant's virtual start time: start-time fair queuing per container. A tenant's next job starts one round
// (`roundMs`) after its last one, and never before now: the jobs of a batch interleave by tenant, a tenant with many
// jobs (a hanging tenant's retries on top of its share of a backlog) waits behind the others' rather than ahead of
// them, and a tenant with nothing queued enters at once. The wait is SQS DelaySeconds, so at most
// `maxDelaySeconds` (900): a tenant's turns past that all wait the longest, still behind what others have
// queued before them. The state is one container's (every container orders what passes through it); nothing is
// stored and no message changes.
import type { Clock } from '../ports';
import type { DeliveryJob, DeliveryQueue } from './ports';

export interface FairLanePolicy {
  /** How far apart one container lets a tenant's jobs into the lane once the tenant has jobs waiting (ms). */
  readonly roundMs: number;
  /** The longest wait the lane's queue can hold (SQS DelaySeconds: 900). */
  readonly maxDelaySeconds: number;
}

/** A queue that takes a wait per message (SQS: DelaySeconds per entry of a SendMessageBatch). */
export interface EachDelayQueue {
  sendEach(entries: readonly { readonly job: DeliveryJob; readonly delaySeconds: number }[]): Promise<void>;
}

export class FairLaneOrder {
  /** Per tenant: when its next job may start (epoch ms), its virtual finishing time. */
  private readonly next = new Map<string, number>();
  private sweptAt = 0;

  constructor(
    readonly policy: FairLanePolicy,
    private readonly clock: Clock,
  ) {}

  /** Tenants with turns still ahead (for tests and the bench). */
  get tenants(): number {
    this.sweep(this.clock.now(), true);
    return this.next.size;
  }

  /**
   * How long (ms) the next job of `tenant` waits before it enters: its virtual start time (the later of now plus
   * `notBeforeMs`, a retry's own delay, and the tenant's last start plus a round) less now. Takes the turn.
   */
  delayMs(tenant: string, notBeforeMs = 0): number {
    const now = this.clock.now();
    this.sweep(now);
    const start = Math.max(now + Math.max(0, notBeforeMs), this.next.get(tenant) ?? 0);
    this.next.set(tenant, start + this.policy.roundMs);
    return start - now;
  }

  /** Forgets the tenants whose turns are all past (at most once a minute unless asked). */
  private sweep(now: number, force = false): void {
    if (!force && now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [tenant, at] of this.next) if (at <= now) this.next.delete(tenant);
  }
}

/** The tenant a job is ordered by: its account (a job from before retries named it: its webhook). */
export const fairTenantOf = (job: DeliveryJob): string => job.seed?.accountId ?? job.accountId ?? job.webhookId;

/**
 * The slow lane's queue with the fair order: each job waits its tenant's turn (at least the caller's delay), at
 * most the queue's longest wait. One send when the queue takes a wait per message; otherwise one per wait.
 */
export class FairDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly inner: DeliveryQueue & Partial<EachDelayQueue>,
    readonly order: FairLaneOrder,
  ) {}

  /** The wait (whole seconds, rounded up) `job` gets if it enters now, no sooner than `delaySeconds`. */
  delaySeconds(job: DeliveryJob, delaySeconds = 0): number {
    const ms = this.order.delayMs(fairTenantOf(job), delaySeconds * 1000);
    return Math.min(this.order.policy.maxDelaySeconds, Math.ceil(ms / 1000));
  }

  async send(jobs: readonly DeliveryJob[], delaySeconds?: number): Promise<void> {
    const entries = jobs.map((job) => ({ job, delaySeconds: this.delaySeconds(job, delaySeconds ?? 0) }));
    if (this.inner.sendEach) return this.inner.sendEach(entries);
    const byDelay = new Map<number, DeliveryJob[]>();
    for (const { job, delaySeconds: wait } of entries) byDelay.set(wait, [...(byDelay.get(wait) ?? []), job]);
    await Promise.all([...byDelay].map(([wait, group]) => this.inner.send(group, wait)));
  }
}
