// Per-email ordering as a property (issue 27): fast-check interleaves every path that makes or moves an event of
// two emails to one `per_email` webhook: the send worker's reservation of a copy's email.sent before the
// hand-over, the provider taking or refusing the copy, email.sent's fan-out where it arises, the provider's later
// events fanned out as they arrive (in their order, as SES tells them), delivery jobs run in any order, endpoint
// failures, store errors between a result and the lane (fault injection), lost wake-ups and retries (a crash),
// the reconciler, and time passing. The real use cases run on the in-memory fakes.
// Safety: no event of an email is attempted before every earlier-sequence event of that email in its lane has
// succeeded or failed for good. Fairness: a delivery is held only while an earlier event of its own email is
// unfinished (other emails never wait). Liveness: once everything arrives, every delivery ends.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AttemptDeps, attemptDelivery } from '../../lambdas/app/webhooks/attempts';
import { dispatchEvent } from '../../lambdas/app/webhooks/dispatch-event';
import type { LaneKey, OrderLanes } from '../../lambdas/app/webhooks/order-lanes';
import { type Reservation, releaseReserved, reserveSent } from '../../lambdas/app/webhooks/ordering';
import type { DeliveryJob, DeliveryQueue, RetryScheduler } from '../../lambdas/app/webhooks/ports';
import { eventSequence } from '../../lambdas/domain/email/sequence';
import type { SendflowEvent } from '../../lambdas/domain/events';
import type { LaneEntry } from '../../lambdas/domain/webhooks/ordering';
import { deliveryIdFor } from '../../lambdas/domain/webhooks/render';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryOrderLanes,
  InMemoryWebhookRepository,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';
import { emailAt, eventOf, T0, webhookOf } from '../support/ordering-fixtures';

/** The deliveries queue and the retry scheduler in one: jobs runnable from their due time, in any order. */
class ModelQueue implements DeliveryQueue, RetryScheduler {
  jobs: { job: DeliveryJob; at: number }[] = [];
  constructor(private readonly clock: FakeClock) {}
  async send(jobs: readonly DeliveryJob[], delaySeconds = 0): Promise<void> {
    for (const job of jobs) this.jobs.push({ job: structuredClone(job), at: this.clock.now() + delaySeconds * 1000 });
  }
  async schedule(job: DeliveryJob, delaySeconds: number): Promise<void> {
    await this.send([job], delaySeconds);
  }
  runnable(): number[] {
    return this.jobs.flatMap((j, i) => (j.at <= this.clock.now() ? [i] : []));
  }
}

/** Lanes whose next `leave` fails once when armed: a store error between a recorded result and the lane. */
class FaultyLanes implements OrderLanes {
  failNextLeave = false;
  constructor(private readonly inner: InMemoryOrderLanes) {}
  enter(lane: LaneKey, entry: LaneEntry, expiresAt: number) {
    return this.inner.enter(lane, entry, expiresAt);
  }
  read(lane: LaneKey) {
    return this.inner.read(lane);
  }
  leave(lane: LaneKey, deliveryId: string) {
    if (this.failNextLeave) {
      this.failNextLeave = false;
      return Promise.reject(new Error('injected: the lane write failed'));
    }
    return this.inner.leave(lane, deliveryId);
  }
}

const EMAILS = [emailAt(11), emailAt(12)];
/** Each email's story: its copy's email.sent, then what the provider tells, a few hundred ms apart. */
const storyOf = (email: string, k: number): SendflowEvent[] => [
  eventOf(email, 'email.sent', 10 + k, 40 + k * 3),
  eventOf(email, 'email.delivered', 900 + k, 41 + k * 3),
  eventOf(email, 'email.opened', 1_900 + k, 42 + k * 3),
];

type Step =
  | { kind: 'reserve'; email: number }
  | { kind: 'handOver'; email: number; taken: boolean }
  | { kind: 'fanOutSent'; email: number }
  | { kind: 'providerTells'; email: number }
  | { kind: 'run'; pick: number; ok: boolean; faultAfter: boolean }
  | { kind: 'crash' }
  | { kind: 'reconcile' }
  | { kind: 'advance'; ms: number };

const email = fc.integer({ min: 0, max: EMAILS.length - 1 });
const weighted = <T>(arbitrary: fc.Arbitrary<T>, weight: number) => ({ arbitrary, weight });
const step: fc.Arbitrary<Step> = fc.oneof(
  weighted(fc.record({ kind: fc.constant('reserve' as const), email }), 2),
  // Mostly taken, as providers mostly take copies.
  weighted(fc.record({ kind: fc.constant('handOver' as const), email, taken: fc.nat(4).map((n) => n > 0) }), 2),
  weighted(fc.record({ kind: fc.constant('fanOutSent' as const), email }), 2),
  weighted(fc.record({ kind: fc.constant('providerTells' as const), email }), 3),
  {
    arbitrary: fc.record({
      kind: fc.constant('run' as const),
      pick: fc.nat(),
      ok: fc.boolean(),
      faultAfter: fc.boolean(),
    }),
    weight: 6,
  },
  fc.record({ kind: fc.constant('crash' as const) }),
  fc.record({ kind: fc.constant('reconcile' as const) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(500, 1_000, 5_000, 61_000) }),
);

/** One world: the fakes, the model of each email's copy and events, and what the invariants saw. */
function world() {
  const clock = new FakeClock(T0 + 5_000);
  const webhooks = new InMemoryWebhookRepository();
  const deliveries = new InMemoryDeliveryRepository();
  const lanes = new FaultyLanes(new InMemoryOrderLanes());
  const sender = new ScriptedSender(clock);
  const queue = new ModelQueue(clock);
  const webhook = webhookOf('per_email');
  const CLAIM_MS = 60_000;
  const VISIBILITY_MS = 3 * CLAIM_MS;
  const deps: AttemptDeps = {
    webhooks,
    deliveries,
    sender,
    retries: queue,
    clock,
    random: seededRandom(),
    policy: { delaysSeconds: [1, 5] },
    claimMs: CLAIM_MS,
    retentionSeconds: 30 * 86_400,
    orderLanes: lanes,
  };
  const stories = EMAILS.map(storyOf);
  const copies = EMAILS.map(() => ({
    state: 'idle' as 'idle' | 'reserved' | 'taken',
    reservations: [] as Reservation[],
    sentToFanOut: false,
    told: 1,
  }));
  const violations: string[] = [];
  /** Every event that entered its lane (reserved or fanned out), by email: those a later one must wait for. */
  const entered = EMAILS.map(() => new Set<SendflowEvent>());
  const deliveryOf = (event: SendflowEvent) => deliveryIdFor(event.id, webhook.id);
  const finished = (event: SendflowEvent) => {
    const row = deliveries.items.get(`${webhook.id}#${deliveryOf(event)}`);
    return row?.status === 'succeeded' || row?.status === 'failed';
  };
  const emailOfDelivery = (deliveryId: string) => {
    for (const [k, story] of stories.entries()) {
      const event = story.find((e) => deliveryOf(e) === deliveryId);
      if (event) return { k, event };
    }
    throw new Error(`unknown delivery ${deliveryId}`);
  };
  /** The earlier events of its email that entered the lane and have not finished, for an event about to go. */
  const unfinishedBefore = (k: number, event: SendflowEvent) =>
    [...(entered[k] as Set<SendflowEvent>)].filter(
      (e) => (eventSequence(e) ?? 0) < (eventSequence(event) ?? 0) && !finished(e),
    );

  let answerOk = true;
  sender.answers(() => (answerOk ? { statusCode: 200 } : { statusCode: 503, error: 'HTTP 503' }));
  const requested = () => sender.requests.length;

  const fanOut = async (k: number, event: SendflowEvent) => {
    (entered[k] as Set<SendflowEvent>).add(event);
    await dispatchEvent(
      { webhooks, deliveryQueue: queue, clock, orderLanes: lanes, retentionSeconds: 30 * 86_400 },
      event,
    );
  };

  async function run(index: number, ok: boolean, faultAfter: boolean) {
    const [taken] = queue.jobs.splice(index, 1);
    if (!taken) return;
    const { k, event } = emailOfDelivery(taken.job.deliveryId);
    answerOk = ok;
    lanes.failNextLeave = faultAfter;
    const before = requested();
    // The safety check runs as the request is made: what had finished at that moment.
    const waiting = unfinishedBefore(k, event).map((e) => e.type);
    let outcome: string;
    try {
      outcome = await attemptDelivery(deps, taken.job);
    } catch {
      // Our own failure (a lane write failed after the claim or the result): SQS gives the job back once its
      // visibility time-out has passed, which the manifest sets longer than a claim holds (a claim the failed
      // attempt left behind has lapsed by then; see test/unit/claims-and-visibility.test.ts).
      queue.jobs.push({ job: taken.job, at: clock.now() + VISIBILITY_MS });
      outcome = 'threw';
    }
    lanes.failNextLeave = false;
    if (requested() > before && waiting.length > 0)
      violations.push(`${event.type} of email ${k} attempted before ${waiting.join(', ')} finished`);
    if (outcome === 'held' && unfinishedBefore(k, event).length === 0)
      violations.push(`${event.type} of email ${k} held with nothing earlier unfinished`);
  }

  async function apply(s: Step) {
    switch (s.kind) {
      case 'reserve': {
        const copy = copies[s.email];
        if (copy?.state !== 'idle') return;
        const sent = stories[s.email]?.[0] as SendflowEvent;
        (entered[s.email] as Set<SendflowEvent>).add(sent);
        copy.reservations = await reserveSent({ ...deps, webhooks }, [sent], clock.now() + 86_400_000);
        copy.state = 'reserved';
        return;
      }
      case 'handOver': {
        const copy = copies[s.email];
        if (copy?.state !== 'reserved') return;
        if (s.taken) {
          copy.state = 'taken';
          copy.sentToFanOut = true;
          return;
        }
        const sent = stories[s.email]?.[0] as SendflowEvent;
        (entered[s.email] as Set<SendflowEvent>).delete(sent);
        await releaseReserved(deps, copy.reservations, new Set([sent.id]));
        copy.state = 'idle';
        return;
      }
      case 'fanOutSent': {
        const copy = copies[s.email];
        if (!copy?.sentToFanOut) return;
        copy.sentToFanOut = false;
        await fanOut(s.email, stories[s.email]?.[0] as SendflowEvent);
        return;
      }
      case 'providerTells': {
        const copy = copies[s.email];
        const story = stories[s.email] as SendflowEvent[];
        if (copy?.state !== 'taken' || copy.told >= story.length) return;
        await fanOut(s.email, story[copy.told] as SendflowEvent);
        copy.told += 1;
        return;
      }
      case 'run': {
        const runnable = queue.runnable();
        if (runnable.length) await run(runnable[s.pick % runnable.length] as number, s.ok, s.faultAfter);
        return;
      }
      case 'crash':
        // What only lived in a process is gone: wake-ups and retries queued in memory. First-attempt jobs (with
        // their seed) are in the durable queue.
        queue.jobs = queue.jobs.filter((j) => j.job.seed !== undefined);
        return;
      case 'reconcile':
        // As app/webhooks/reconcile does: every overdue due row's next attempt, queued now.
        for (const due of await deliveries.listDue(clock.now(), 1_000))
          await queue.schedule({ deliveryId: due.id, webhookId: due.webhookId, attempt: due.attempts + 1 }, 0);
        return;
      case 'advance':
        clock.advance(s.ms);
        return;
    }
  }

  /** Everything arrives and every copy is taken; jobs run (succeeding), the reconciler looks, time passes. */
  async function settle() {
    for (let round = 0; round < 40; round++) {
      for (const [k] of EMAILS.entries()) {
        await apply({ kind: 'reserve', email: k });
        await apply({ kind: 'handOver', email: k, taken: true });
        await apply({ kind: 'fanOutSent', email: k });
        for (let n = 0; n < 3; n++) await apply({ kind: 'providerTells', email: k });
      }
      for (let n = 0; n < 50 && queue.runnable().length; n++) await run(queue.runnable()[0] as number, true, false);
      await apply({ kind: 'reconcile' });
      await apply({ kind: 'advance', ms: 61_000 });
    }
  }

  const unfinished = () =>
    stories.flat().filter((event) => {
      const row = deliveries.items.get(`${webhook.id}#${deliveryOf(event)}`);
      return row?.status !== 'succeeded' && row?.status !== 'failed';
    });

  return { webhooks, webhook, apply, settle, violations, unfinished, sender };
}

/** A seed kept as an example: email.sent done, then delivered and opened told together, opened's job first. */
const LATER_EVENTS_TOLD_TOGETHER: Step[] = [
  { kind: 'reserve', email: 0 },
  { kind: 'handOver', email: 0, taken: true },
  { kind: 'fanOutSent', email: 0 },
  { kind: 'run', pick: 0, ok: true, faultAfter: false },
  { kind: 'providerTells', email: 0 },
  { kind: 'providerTells', email: 0 },
  { kind: 'run', pick: 1, ok: true, faultAfter: false },
];

describe('per_email ordering over interleavings of every event path, failures and restarts', () => {
  it('never attempts an event before its email’s earlier ones finished, never holds for another email, and ends every delivery', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 60 }), async (steps) => {
        const w = world();
        await w.webhooks.create(w.webhook);
        for (const s of steps) await w.apply(s);
        await w.settle();

        expect(w.violations).toEqual([]);
        expect(w.unfinished().map((event) => event.type)).toEqual([]);
      }),
      { numRuns: 500, examples: [[LATER_EVENTS_TOLD_TOGETHER]] },
    );
  }, 120_000);
});
