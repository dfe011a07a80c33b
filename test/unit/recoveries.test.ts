// Unit tests of recovery jobs' steps (lambdas/app/webhooks/recoveries.ts) on the in-memory fakes and a fake
// clock: a step pages through the window and queues the next one; a duplicated, late or stale step makes no
// request and writes nothing; a step redelivered after its progress was stored re-queues the next step; a step
// redelivered after a crash mid-attempt finishes the attempt it claimed; pending deliveries and deliveries
// attempted since the job began are skipped; a paused webhook ends the job canceled.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Delivery, Recovery, Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import {
  cancelRecovery,
  type RecoveryDeps,
  runRecoveryStep,
  startRecovery,
} from '../../lambdas/app/webhooks/recoveries';
import { idTime, timeOrderedId } from '../../lambdas/domain/ids';
import { recoveryPageSize, recoveryWindow } from '../../lambdas/domain/webhooks/recovery';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryRecoveryRepository,
  InMemoryWebhookRepository,
  RecordingRecoveryQueue,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);
const TENANT: Tenant = { accountId: 'acct_main', mode: 'test' };
const random = seededRandom('recoveries');

const webhook: Webhook = {
  ...TENANT,
  id: 'wh_main',
  url: 'https://hooks.example.com/in',
  events: ['email.sent'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 86_400_000).toISOString(),
  updatedAt: new Date(T0 - 86_400_000).toISOString(),
};

function failed(at: number, overrides: Partial<Delivery> = {}): Delivery {
  return {
    ...TENANT,
    id: timeOrderedId('dlv', at, random),
    webhookId: webhook.id,
    eventId: timeOrderedId('evt', at, random),
    event: 'email.sent',
    format: 'standard',
    payload: '{"type":"email.sent"}',
    status: 'failed',
    attempts: 5,
    maxAttempts: 5,
    attemptLog: [],
    response: '',
    nextAttemptAt: null,
    deliveredAt: null,
    createdAt: at,
    claimedAt: at,
    ...overrides,
  };
}

let clock: FakeClock;
let deps: RecoveryDeps;
let deliveries: InMemoryDeliveryRepository;
let recoveries: InMemoryRecoveryRepository;
let queue: RecordingRecoveryQueue;
let sender: ScriptedSender;
let webhooks: InMemoryWebhookRepository;

beforeEach(async () => {
  clock = new FakeClock(T0);
  deliveries = new InMemoryDeliveryRepository();
  recoveries = new InMemoryRecoveryRepository();
  queue = new RecordingRecoveryQueue();
  sender = new ScriptedSender(clock);
  webhooks = new InMemoryWebhookRepository();
  await webhooks.create(webhook);
  deps = {
    webhooks,
    deliveries,
    recoveries,
    recoveryQueue: queue,
    sender,
    retries: new RecordingRetryScheduler(),
    clock,
    random,
    policy: { delaysSeconds: [1, 30] },
    claimMs: 40_000,
    retentionSeconds: 30 * 86_400,
  };
});

async function seed(rows: Delivery[]) {
  for (const row of rows) deliveries.items.set(`${row.webhookId}#${row.id}`, structuredClone(row));
}

const lastStep = () => {
  const step = queue.sent.at(-1)?.step;
  if (!step) throw new Error('no step queued');
  return step;
};
const stored = (job: Recovery) => recoveries.items.get(`${job.webhookId}#${job.id}`) as Recovery;

describe('runRecoveryStep', () => {
  it('pages through the window, one page a step, each next step queued after the pace delay', async () => {
    await seed(Array.from({ length: 23 }, (_, i) => failed(T0 - 600_000 + i * 1_000)));
    clock.advance(1_000);
    const job = await startRecovery(deps, TENANT, webhook.id, { since: new Date(T0 - 3_600_000).toISOString() });

    for (let n = 0; n < 10 && stored(job).status === 'running'; n++) await runRecoveryStep(deps, lastStep());

    expect(stored(job)).toMatchObject({ status: 'completed', total: 23, succeeded: 23, failed: 0, skipped: 0 });
    expect(sender.requests).toHaveLength(23);
    expect(queue.sent.map((s) => s.delaySeconds)).toEqual([undefined, 1, 1]);
    expect(queue.sent.map((s) => s.step.step)).toEqual([0, 1, 2]);
  });

  it('a duplicated or stale step makes no request and writes nothing', async () => {
    await seed([failed(T0 - 60_000)]);
    clock.advance(1_000);
    const job = await startRecovery(deps, TENANT, webhook.id, { since: new Date(T0 - 3_600_000).toISOString() });
    const first = lastStep();
    await runRecoveryStep(deps, first);
    const after = structuredClone(stored(job));
    const requests = sender.requests.length;

    await runRecoveryStep(deps, first); // delivered twice by SQS, after the first copy completed the job
    await runRecoveryStep(deps, { ...first, step: 7 });
    await runRecoveryStep(deps, { ...first, accountId: 'acct_other' });

    expect(sender.requests).toHaveLength(requests);
    expect(stored(job)).toEqual(after);
  });

  it('a step whose progress was stored but whose next step was never queued queues it again', async () => {
    await seed(Array.from({ length: 12 }, (_, i) => failed(T0 - 60_000 + i)));
    clock.advance(1_000);
    const job = await startRecovery(deps, TENANT, webhook.id, { since: new Date(T0 - 3_600_000).toISOString() });
    const first = lastStep();
    const send = queue.send.bind(queue);
    queue.send = () => Promise.reject(new Error('SQS unavailable')); // the step dies after storing its progress
    await expect(runRecoveryStep(deps, first)).rejects.toThrow('SQS unavailable');
    queue.send = send;

    await runRecoveryStep(deps, first); // SQS delivers the step again

    expect(lastStep()).toMatchObject({ step: 1, recoveryId: job.id });
    expect(stored(job).queuedStep).toBe(1);
    expect(sender.requests).toHaveLength(10);
  });

  it('a late duplicate of a step whose next step is queued does nothing: no second chain of steps', async () => {
    await seed(Array.from({ length: 25 }, (_, i) => failed(T0 - 60_000 + i)));
    clock.advance(1_000);
    await startRecovery(deps, TENANT, webhook.id, { since: new Date(T0 - 3_600_000).toISOString() });
    const first = lastStep();
    await runRecoveryStep(deps, first);
    const queued = queue.sent.length;

    await runRecoveryStep(deps, first);

    expect(queue.sent).toHaveLength(queued);
    expect(sender.requests).toHaveLength(10);
  });

  it('a copy of a step that another runner holds does nothing; a lease of a dead runtime (earlier epoch) is void', async () => {
    await seed(Array.from({ length: 3 }, (_, i) => failed(T0 - 60_000 + i)));
    clock.advance(1_000);
    const job = await startRecovery(deps, TENANT, webhook.id, { since: new Date(T0 - 3_600_000).toISOString() });
    const step = lastStep();
    const held = { attempt: 0, until: clock.now() + 30_000, epoch: 5 };
    await recoveries.lease(webhook.id, job.id, 0, held, clock.now());

    await runRecoveryStep({ ...deps, claimEpoch: 5 }, step);
    expect(sender.requests).toHaveLength(0);

    await runRecoveryStep({ ...deps, claimEpoch: 6 }, step); // restarted: the old runtime's lease is void
    expect(sender.requests).toHaveLength(3);
    expect(stored(job)).toMatchObject({ status: 'completed', succeeded: 3 });
    expect(stored(job).lease).toBeUndefined();
  });

  it('one job runs per webhook (409 recovery_running); a job stale for 15 minutes is canceled by the next', async () => {
    clock.advance(1_000);
    const since = new Date(T0 - 3_600_000).toISOString();
    const first = await startRecovery(deps, TENANT, webhook.id, { since });

    await expect(startRecovery(deps, TENANT, webhook.id, { since })).rejects.toMatchObject({
      status: 409,
      code: 'recovery_running',
    });
    clock.advance(15 * 60_000);
    const second = await startRecovery(deps, TENANT, webhook.id, { since });

    expect(stored(first).status).toBe('canceled');
    expect(stored(second).status).toBe('running');
  });

  it('a job whose first step cannot be queued is canceled, and the caller gets the error', async () => {
    queue.send = () => Promise.reject(new Error('SQS unavailable'));
    await expect(
      startRecovery(deps, TENANT, webhook.id, { since: new Date(T0 - 3_600_000).toISOString() }),
    ).rejects.toThrow('SQS unavailable');
    expect([...recoveries.items.values()].map((job) => job.status)).toEqual(['canceled']);
  });

  it('skips pending deliveries and ones attempted since the job began; finishes its own unrecorded claim', async () => {
    clock.advance(10_000);
    const since = new Date(T0 - 3_600_000).toISOString();
    const job = await startRecovery(deps, TENANT, webhook.id, { since });
    const pending = failed(T0 - 50_000, { status: 'pending', nextAttemptAt: T0 + 60_000 });
    const retriedSince = failed(T0 - 40_000, { claimedAt: clock.now() + 1 });
    // Claimed by this job's step, which then died before recording (its claim lapsed).
    const unfinished = failed(T0 - 30_000, {
      claimedAt: clock.now() + 1,
      claim: { attempt: 6, until: clock.now() + 2, by: job.id },
    });
    const plain = failed(T0 - 20_000);
    await seed([pending, retriedSince, unfinished, plain]);
    clock.advance(60_000);

    await runRecoveryStep(deps, lastStep());

    expect(stored(job)).toMatchObject({ status: 'completed', total: 4, succeeded: 2, skipped: 2 });
    expect(sender.requests).toHaveLength(2);
    expect((await deliveries.get(webhook.id, unfinished.id, clock.now()))?.attempts).toBe(6);
    expect((await deliveries.get(webhook.id, retriedSince.id, clock.now()))?.attempts).toBe(5);
  });

  it('a webhook paused meanwhile ends the job canceled, with no request', async () => {
    await seed([failed(T0 - 60_000)]);
    clock.advance(1_000);
    const job = await startRecovery(deps, TENANT, webhook.id, { since: new Date(T0 - 3_600_000).toISOString() });
    await webhooks.update(TENANT, webhook.id, { active: false }, new Date().toISOString());

    await runRecoveryStep(deps, lastStep());

    expect(stored(job).status).toBe('canceled');
    expect(stored(job).expiresAt).toBeDefined();
    expect(sender.requests).toHaveLength(0);
  });

  it('a canceled job takes no further step', async () => {
    await seed(Array.from({ length: 3 }, (_, i) => failed(T0 - 60_000 + i)));
    clock.advance(1_000);
    const job = await startRecovery(deps, TENANT, webhook.id, { since: new Date(T0 - 3_600_000).toISOString() });
    await cancelRecovery(deps, TENANT, webhook.id, job.id);

    await runRecoveryStep(deps, lastStep());

    expect(sender.requests).toHaveLength(0);
    expect(stored(job).status).toBe('canceled');
  });
});

describe('recoveryWindow', () => {
  const now = T0;
  const iso = (ms: number) => new Date(ms).toISOString();
  const DAY = 86_400;
  it('starts a window older than the retention at its start (nothing older is kept; no id from before 1970)', () => {
    expect(recoveryWindow({ since: '0001-01-01T00:00:00Z' }, now, DAY)).toEqual({
      since: now - DAY * 1000,
      until: now,
    });
    expect(() => idTime(-1)).toThrow(RangeError);
  });

  it('takes one round of attempts a step when two rounds of time-outs would not fit', () => {
    expect(recoveryPageSize(10_000, 25_000)).toBe(10);
    expect(recoveryPageSize(20_000, 25_000)).toBe(5);
    expect(recoveryPageSize(60_000, 25_000)).toBe(5);
    expect(recoveryPageSize(1_000, 25_000)).toBe(10);
  });

  it('defaults `until` to now and refuses future or reversed windows', () => {
    expect(recoveryWindow({ since: iso(now - 1_000) }, now, DAY)).toEqual({ since: now - 1_000, until: now });
    expect(() => recoveryWindow({ since: iso(now + 1) }, now, DAY)).toThrow(/^`since` is in the future/);
    expect(() => recoveryWindow({ since: iso(now - 1_000), until: iso(now + 1) }, now, DAY)).toThrow(
      /^`until` is in the future/,
    );
    expect(() => recoveryWindow({ since: iso(now - 1_000), until: iso(now - 2_000) }, now, DAY)).toThrow(
      /^`until` is before `since`/,
    );
  });
});
