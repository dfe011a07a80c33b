// Contract suite for recovery jobs' storage, run against DynamoDB (the jobs share the deliveries table) and the
// in-memory fakes: a job's progress is written only at the step it was read at (a duplicated or late step
// changes nothing), cancel only stops a running job, ended jobs expire; the window's ids come oldest first from
// the webhook's log (failed rows only when asked), paged; and a webhook's delivery log never shows its jobs.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Delivery, DeliveryRepository, Recovery, RecoveryRepository } from '../../../lambdas/app/webhooks/ports';
import { timeOrderedId } from '../../../lambdas/domain/ids';
import type { DeliveryStatus } from '../../../lambdas/domain/webhooks/delivery';
import { deliveryIdRange } from '../../../lambdas/domain/webhooks/recovery';
import type { RepositoryHarness } from './harness';

export interface RecoveryStorage {
  readonly recoveries: RecoveryRepository;
  readonly deliveries: DeliveryRepository;
}

const NOW = Date.UTC(2025, 3, 1, 12, 0, 0);
const newWebhookId = () => `wh_${randomBytes(8).toString('hex')}`;

function job(webhookId: string, overrides: Partial<Recovery> = {}): Recovery {
  return {
    accountId: 'acct_contract',
    mode: 'test',
    id: timeOrderedId('rec', NOW, randomBytes),
    webhookId,
    status: 'running',
    since: NOW - 3_600_000,
    until: NOW,
    onlyFailed: true,
    total: 0,
    succeeded: 0,
    failed: 0,
    skipped: 0,
    step: 0,
    cursor: null,
    createdAt: NOW,
    updatedAt: NOW,
    expiresAt: Math.floor(NOW / 1000) + 86_400,
    ...overrides,
  };
}

function delivery(webhookId: string, at: number, status: DeliveryStatus, overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: timeOrderedId('dlv', at, randomBytes),
    webhookId,
    accountId: 'acct_contract',
    mode: 'test',
    eventId: timeOrderedId('evt', at, randomBytes),
    event: 'email.sent',
    format: 'standard',
    payload: '{}',
    status,
    attempts: 5,
    maxAttempts: 5,
    attemptLog: [],
    response: '',
    nextAttemptAt: status === 'pending' ? at : null,
    deliveredAt: null,
    createdAt: at,
    ...overrides,
  };
}

export function recoveryRepositoryContract(harness: RepositoryHarness<RecoveryStorage>): void {
  it('stores a job and reads it back; another webhook or an unknown id reads nothing', async () => {
    const { recoveries } = harness.shared();
    const stored = job(newWebhookId());
    await recoveries.create(stored);
    expect(await recoveries.get(stored.webhookId, stored.id, NOW)).toEqual(stored);
    expect(await recoveries.get(newWebhookId(), stored.id, NOW)).toBeNull();
    expect(await recoveries.get(stored.webhookId, 'rec_unknown', NOW)).toBeNull();
    expect(await recoveries.get(stored.webhookId, 'dlv_notajob', NOW)).toBeNull();
  });

  it('advances only from the step it was read at, and only while running', async () => {
    const { recoveries } = harness.shared();
    const stored = job(newWebhookId());
    await recoveries.create(stored);
    const next = { ...stored, step: 1, total: 10, succeeded: 10, cursor: 'dlv_x' };
    expect(await recoveries.advance(next, 0)).toBe(true);
    // A duplicated step 0, or a late one, changes nothing.
    expect(await recoveries.advance({ ...stored, step: 1, total: 99 }, 0)).toBe(false);
    expect(await recoveries.get(stored.webhookId, stored.id, NOW)).toEqual(next);
    const canceled = await recoveries.cancel(stored.webhookId, stored.id, NOW + 1, 2e9);
    expect(canceled).toMatchObject({ status: 'canceled', step: 1, total: 10, updatedAt: NOW + 1, expiresAt: 2e9 });
    expect(await recoveries.advance({ ...next, step: 2 }, 1)).toBe(false);
  });

  it('leases a running job at its step once; a lapsed lease, or one of an earlier epoch, is void; advance releases it', async () => {
    const { recoveries } = harness.shared();
    const stored = job(newWebhookId());
    await recoveries.create(stored);
    const lease = { attempt: 0, until: NOW + 30_000, epoch: 7 };
    const leased = await recoveries.lease(stored.webhookId, stored.id, 0, lease, NOW);
    expect(leased?.lease).toEqual(lease);
    expect(
      await recoveries.lease(stored.webhookId, stored.id, 0, { ...lease, until: NOW + 60_000 }, NOW + 1),
    ).toBeNull();
    expect(await recoveries.lease(stored.webhookId, stored.id, 1, lease, NOW + 1)).toBeNull();
    // A restarted runtime (a later epoch), or the lease's end: void.
    expect(await recoveries.lease(stored.webhookId, stored.id, 0, { ...lease, epoch: 8 }, NOW + 1)).not.toBeNull();
    expect(await recoveries.lease(stored.webhookId, stored.id, 0, { ...lease, epoch: 8 }, NOW + 31_000)).not.toBeNull();
    expect(await recoveries.advance({ ...stored, step: 1, lease }, 0)).toBe(true);
    expect((await recoveries.get(stored.webhookId, stored.id, NOW))?.lease).toBeUndefined();
  });

  it('notes a step queued only while the job is running at that step', async () => {
    const { recoveries } = harness.shared();
    const stored = job(newWebhookId());
    await recoveries.create(stored);
    await recoveries.markQueued(stored.webhookId, stored.id, 1);
    expect((await recoveries.get(stored.webhookId, stored.id, NOW))?.queuedStep).toBeUndefined();
    await recoveries.markQueued(stored.webhookId, stored.id, 0);
    expect((await recoveries.get(stored.webhookId, stored.id, NOW))?.queuedStep).toBe(0);
  });

  it("lists a webhook's jobs newest first, never its deliveries nor another webhook's jobs", async () => {
    const { recoveries, deliveries } = harness.shared();
    const webhookId = newWebhookId();
    const jobs = [0, 1, 2].map((n) => job(webhookId, { id: timeOrderedId('rec', NOW + n, randomBytes) }));
    for (const stored of jobs) await recoveries.create(stored);
    await recoveries.create(job(newWebhookId()));
    expect(await deliveries.createClaimed(delivery(webhookId, NOW - 1_000, 'failed'))).toBe(true);
    expect((await recoveries.list(webhookId, NOW, 20)).map((r) => r.id)).toEqual(jobs.map((r) => r.id).reverse());
    expect(await recoveries.list(webhookId, NOW, 2)).toHaveLength(2);
    expect(await deliveries.get(webhookId, jobs[0]?.id ?? '', NOW)).toBeNull();
  });

  it('cancel leaves an ended job as it is and returns it; an unknown job is null', async () => {
    const { recoveries } = harness.shared();
    const done = job(newWebhookId(), { status: 'completed', expiresAt: 2e9 });
    await recoveries.create(done);
    expect(await recoveries.cancel(done.webhookId, done.id, NOW, 2e9)).toEqual(done);
    expect(await recoveries.cancel(done.webhookId, 'rec_unknown', NOW, 2e9)).toBeNull();
  });

  it('an ended job expires', async () => {
    const { recoveries } = harness.shared();
    const ended = job(newWebhookId(), { status: 'completed', expiresAt: Math.floor(NOW / 1000) });
    await recoveries.create(ended);
    expect(await recoveries.get(ended.webhookId, ended.id, NOW)).toBeNull();
  });

  it("reads a window's ids oldest first, paged, failed only when asked; never the webhook's jobs", async () => {
    const { recoveries, deliveries } = harness.shared();
    const webhookId = newWebhookId();
    const statuses: DeliveryStatus[] = ['failed', 'succeeded', 'failed', 'pending', 'failed', 'failed'];
    const rows = statuses.map((status, i) => delivery(webhookId, NOW - 60_000 + i * 1_000, status));
    const outside = [delivery(webhookId, NOW - 7_200_000, 'failed'), delivery(webhookId, NOW + 60_000, 'failed')];
    const expired = delivery(webhookId, NOW - 30_000 + 500, 'failed', { expiresAt: Math.floor(NOW / 1000) });
    for (const row of [...rows, ...outside, expired]) expect(await deliveries.createClaimed(row)).toBe(true);
    await recoveries.create(job(webhookId));
    const range = deliveryIdRange({ since: NOW - 3_600_000, until: NOW });

    const read = async (onlyFailed: boolean) => {
      const ids: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 10; page++) {
        const got = await deliveries.range(
          webhookId,
          { ...range, onlyFailed, limit: 2, ...(after ? { after } : {}) },
          NOW,
        );
        expect(got.ids.length).toBeLessThanOrEqual(2);
        ids.push(...got.ids);
        if (got.next === null) return ids;
        after = got.next;
      }
      throw new Error('range never ended');
    };

    expect(await read(false)).toEqual(rows.map((row) => row.id));
    expect(await read(true)).toEqual(rows.filter((row) => row.status === 'failed').map((row) => row.id));
    const log = await deliveries.list(webhookId, { limit: 100 }, NOW);
    expect(log.items.map((item) => item.id).every((id) => id.startsWith('dlv_'))).toBe(true);
    expect(log.items).toHaveLength(rows.length + outside.length);
  });
}
