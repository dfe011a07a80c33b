// The fan-out with payload filters (app/webhooks/dispatch-event, app/events/process-event): a webhook's filter is
// applied after its subscription, a filtered event makes no delivery job, and the batch writes one counter ADD per
// webhook (FilteredTally) for what its filters kept back; unsubscribed events are neither matched nor counted.
import { describe, expect, it } from 'vitest';
import { processEvents } from '../../lambdas/app/events/process-event';
import type { DeliveryJob, FilteredCounts, Webhook } from '../../lambdas/app/webhooks/ports';
import { emailEvent } from '../../lambdas/domain/events';

const NOW = Date.parse('2026-03-01T10:30:00Z');
const tenant = { accountId: 'acct_1', mode: 'test' as const };
const hook = (id: string, extra: Partial<Webhook> = {}): Webhook => ({
  ...tenant,
  id,
  url: `https://hooks.example.com/${id}`,
  events: ['email.sent', 'email.delivered'],
  format: 'standard',
  secret: 'whsec_x',
  active: true,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  ...extra,
});
const email = (plan: string) => ({
  id: `em_${plan}`,
  ...tenant,
  from: 'a@acme.test',
  subject: 's',
  tags: [{ name: 'plan', value: plan }],
});
let seed = 0;
const event = (plan: string, type: 'email.sent' | 'email.bounced' = 'email.sent') => {
  seed += 1;
  return emailEvent(email(plan), 'ada@example.com', type, {}, { at: NOW }, (n) => new Uint8Array(n).fill(seed));
};

function world(webhooks: Webhook[]) {
  const jobs: DeliveryJob[] = [];
  const added: { webhookId: string; hour: number; count: number }[][] = [];
  const counts: FilteredCounts = {
    add: async (entries) => void added.push([...entries]),
    last24h: async () => 0,
  };
  const deps = {
    webhooks: { list: async () => webhooks },
    deliveryQueue: { send: async (sent: readonly DeliveryJob[]) => void jobs.push(...sent) },
    clock: { now: () => NOW },
    emailHistory: { record: async () => false, noteStatus: async () => undefined },
    suppressions: {} as never,
    filteredCounts: counts,
  };
  return { deps, jobs, added };
}

describe('fan-out with payload filters', () => {
  it('delivers what each filter matches and counts the rest once per webhook and batch', async () => {
    // Arrange
    const pro = hook('wh_pro', { filter: { tags: { plan: 'pro' } } });
    const free = hook('wh_free', { filter: { tags: { plan: 'free' } } });
    const all = hook('wh_all');
    const { deps, jobs, added } = world([pro, free, all]);
    // Act: three events of a pro email, one of a free one, and a bounce no webhook subscribes to.
    const failed = await processEvents(deps as never, [
      event('pro'),
      event('pro', 'email.bounced'),
      event('free'),
      event('pro'),
    ]);
    // Assert
    expect(failed).toEqual([]);
    const by = (id: string) => jobs.filter((job) => job.webhookId === id).length;
    expect([by('wh_pro'), by('wh_free'), by('wh_all')]).toEqual([2, 1, 3]);
    // One ADD per webhook for the batch: wh_free kept back the two pro events, wh_pro the free one; the bounce
    // (subscribed by none) is counted nowhere.
    expect(added).toEqual([
      [
        { webhookId: 'wh_free', hour: Math.floor(NOW / 3_600_000), count: 2 },
        { webhookId: 'wh_pro', hour: Math.floor(NOW / 3_600_000), count: 1 },
      ],
    ]);
  });

  it('writes no counter when nothing was filtered, and an empty filter filters nothing', async () => {
    const { deps, jobs, added } = world([hook('wh_empty', { filter: {} }), hook('wh_null', { filter: null })]);
    await processEvents(deps as never, [event('pro')]);
    expect(jobs).toHaveLength(2);
    expect(added).toEqual([]);
  });
});
