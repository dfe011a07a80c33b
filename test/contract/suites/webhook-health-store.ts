// Contract suite for the WebhookHealthStore port (auto-disable's bookkeeping on the webhook item), run against
// DynamoWebhookHealth (dynalite, DynamoDB Local) and InMemoryWebhookHealth: a streak starts once and counts every
// failure, whichever write is tried first; a success clears it; the failing notice is noted once per streak;
// disabling happens once, only for the streak that earned it; a resume's nulls read as "no streak".
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Tenant, Webhook, WebhookHealthStore, WebhookRepository } from '../../../lambdas/app/webhooks/ports';
import { timeOrderedId } from '../../../lambdas/domain/ids';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2026, 10, 20, 0, 0, 0);

export interface HealthSubject {
  readonly webhooks: WebhookRepository;
  readonly health: WebhookHealthStore;
}

async function newWebhook(repo: WebhookRepository): Promise<Webhook> {
  const tenant: Tenant = { accountId: `acct_${randomBytes(6).toString('hex')}`, mode: 'test' };
  const createdAt = new Date(T0).toISOString();
  const webhook: Webhook = {
    ...tenant,
    id: timeOrderedId('wh', T0, randomBytes),
    url: 'https://hooks.example.com/sendflow',
    events: ['email.sent'],
    format: 'standard',
    secret: `whsec_${randomBytes(32).toString('base64')}`,
    active: true,
    createdAt,
    updatedAt: createdAt,
  };
  await repo.create(webhook);
  return webhook;
}

export function webhookHealthStoreContract(harness: RepositoryHarness<HealthSubject>): void {
  const s = () => harness.shared();

  it('starts a streak at the first failure and counts each later one, whichever write is tried first', async () => {
    // Arrange
    const hook = await newWebhook(s().webhooks);

    // Act: the caller's copy is stale both ways (it thinks there is a streak before there is, and none after).
    const first = await s().health.countFailure(hook, hook.id, T0 + 1, true);
    const second = await s().health.countFailure(hook, hook.id, T0 + 2, false);
    const third = await s().health.countFailure(hook, hook.id, T0 + 3, true);

    // Assert
    expect(first).toEqual({ since: T0 + 1, failures: 1, failingNotified: false });
    expect(second).toEqual({ since: T0 + 1, failures: 2, failingNotified: false });
    expect(third).toEqual({ since: T0 + 1, failures: 3, failingNotified: false });
    expect(await s().webhooks.get(hook, hook.id)).toMatchObject({ failingSince: T0 + 1, failedDeliveries: 3 });
  });

  it('counts every one of simultaneous failures', async () => {
    // Arrange
    const hook = await newWebhook(s().webhooks);

    // Act
    await Promise.all(Array.from({ length: 8 }, (_, i) => s().health.countFailure(hook, hook.id, T0 + i, i % 2 === 0)));

    // Assert
    expect((await s().webhooks.get(hook, hook.id))?.failedDeliveries).toBe(8);
  });

  it('clears the streak on a success, and a later failure starts a new one', async () => {
    // Arrange
    const hook = await newWebhook(s().webhooks);
    await s().health.countFailure(hook, hook.id, T0, false);
    await s().health.noteFailing(hook, hook.id, T0, T0 + 5);

    // Act
    await s().health.clearStreak(hook, hook.id);
    const cleared = await s().webhooks.get(hook, hook.id);
    await s().health.clearStreak(hook, hook.id);
    const again = await s().health.countFailure(hook, hook.id, T0 + 10, true);

    // Assert
    expect(cleared?.failingSince ?? null).toBeNull();
    expect(cleared?.failedDeliveries ?? null).toBeNull();
    expect(cleared?.failingNotifiedAt ?? null).toBeNull();
    expect(again).toEqual({ since: T0 + 10, failures: 1, failingNotified: false });
  });

  it('reads the nulls a resume stores as no streak', async () => {
    // Arrange
    const hook = await newWebhook(s().webhooks);
    await s().health.countFailure(hook, hook.id, T0, false);
    await s().webhooks.update(
      hook,
      hook.id,
      { failingSince: null, failedDeliveries: null, failingNotifiedAt: null },
      new Date(T0).toISOString(),
    );

    // Act
    const next = await s().health.countFailure(hook, hook.id, T0 + 7, true);

    // Assert
    expect(next).toEqual({ since: T0 + 7, failures: 1, failingNotified: false });
  });

  it('notes the failing notice once per streak, and only for that streak', async () => {
    // Arrange
    const hook = await newWebhook(s().webhooks);
    await s().health.countFailure(hook, hook.id, T0, false);

    // Act
    const notes = await Promise.all([1, 2, 3].map((i) => s().health.noteFailing(hook, hook.id, T0, T0 + i)));
    const otherStreak = await s().health.noteFailing(hook, hook.id, T0 - 1, T0 + 9);

    // Assert
    expect(notes.filter(Boolean)).toHaveLength(1);
    expect(otherStreak).toBe(false);
    expect((await s().health.countFailure(hook, hook.id, T0 + 10, true))?.failingNotified).toBe(true);
  });

  it('disables an active webhook once, with its reason and time; a failing disable needs its streak', async () => {
    // Arrange
    const failing = await newWebhook(s().webhooks);
    const gone = await newWebhook(s().webhooks);
    await s().health.countFailure(failing, failing.id, T0, false);

    // Act
    const wrongStreak = await s().health.disable(failing, failing.id, 'failing', T0 + 1, T0 - 1);
    const disabled = await Promise.all(
      [1, 2].map(() => s().health.disable(failing, failing.id, 'failing', T0 + 5_000, T0)),
    );
    const goneNow = await s().health.disable(gone, gone.id, 'gone', T0 + 6_000);

    // Assert
    expect(wrongStreak).toBeNull();
    expect(disabled.filter((w) => w !== null)).toHaveLength(1);
    const at = new Date(T0 + 5_000).toISOString();
    expect(await s().webhooks.get(failing, failing.id)).toMatchObject({
      active: false,
      disabledReason: 'failing',
      disabledAt: at,
      updatedAt: at,
    });
    expect(goneNow).toMatchObject({ id: gone.id, active: false, disabledReason: 'gone' });
    expect(await s().health.disable(gone, gone.id, 'gone', T0 + 7_000)).toBeNull();
  });

  it('finds nothing for a webhook that does not exist', async () => {
    const tenant: Tenant = { accountId: 'acct_none', mode: 'test' };
    expect(await s().health.countFailure(tenant, 'wh_missing', T0, false)).toBeNull();
    expect(await s().health.noteFailing(tenant, 'wh_missing', T0, T0)).toBe(false);
    expect(await s().health.disable(tenant, 'wh_missing', 'gone', T0)).toBeNull();
    await s().health.clearStreak(tenant, 'wh_missing');
    expect(await s().webhooks.get(tenant, 'wh_missing')).toBeNull();
  });
}
