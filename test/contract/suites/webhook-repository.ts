// Contract suite for the WebhookRepository port, written once and run against DynamoWebhookRepository (dynalite,
// DynamoDB Local) and InMemoryWebhookRepository: tenant isolation (account and mode), conflicts, ALL_NEW
// updates, conditional deletes, and per-tenant listings oldest first.
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import type { Tenant, Webhook, WebhookRepository } from '../../../lambdas/app/webhooks/ports';
import { ConflictError } from '../../../lambdas/domain/errors';
import { timeOrderedId } from '../../../lambdas/domain/ids';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2025, 3, 1, 10, 0, 0);

function newTenant(mode: Tenant['mode'] = 'test'): Tenant {
  return { accountId: `acct_${randomBytes(6).toString('hex')}`, mode };
}

function newWebhook(tenant: Tenant, overrides: Partial<Webhook> = {}, atMs = T0): Webhook {
  const createdAt = new Date(atMs).toISOString();
  return {
    ...tenant,
    id: timeOrderedId('wh', atMs, randomBytes),
    url: 'https://hooks.example.com/sendflow',
    events: ['email.sent', 'email.delivered'],
    format: 'standard',
    secret: `whsec_${randomBytes(32).toString('base64')}`,
    active: true,
    createdAt,
    updatedAt: createdAt,
    ...overrides,
  };
}

export function webhookRepositoryContract(harness: RepositoryHarness<WebhookRepository>): void {
  const repo = () => harness.shared();

  it('creates a webhook and gets it back exactly, with and without a description', async () => {
    // Arrange
    const tenant = newTenant();
    const plain = newWebhook(tenant);
    const described = newWebhook(tenant, { description: 'Billing alerts', format: 'slack', active: false });

    // Act
    await repo().create(plain);
    await repo().create(described);

    // Assert
    expect(await repo().get(tenant, plain.id)).toEqual(plain);
    expect(await repo().get(tenant, described.id)).toEqual(described);
  });

  it('keeps the ordering option: stored when given, changed by update, absent (none) on a webhook without it', async () => {
    // Arrange
    const tenant = newTenant();
    const ordered = newWebhook(tenant, { ordering: 'per_email' });
    const plain = newWebhook(tenant);

    // Act
    await repo().create(ordered);
    await repo().create(plain);
    const switched = await repo().update(tenant, plain.id, { ordering: 'per_email' }, '2025-04-02T00:00:00.000Z');
    const off = await repo().update(tenant, ordered.id, { ordering: 'none' }, '2025-04-02T00:00:00.000Z');

    // Assert
    expect(plain).not.toHaveProperty('ordering');
    expect(switched?.ordering).toBe('per_email');
    expect(off?.ordering).toBe('none');
    expect((await repo().getMany([{ ...tenant, id: plain.id }]))[0]?.ordering).toBe('per_email');
    expect((await repo().list(tenant)).map((w) => w.ordering).sort()).toEqual(['none', 'per_email']);
  });

  it('stores a rotation: the new secret, the previous one and its expiry, read back by get, getMany and list', async () => {
    // Arrange
    const tenant = newTenant();
    const webhook = newWebhook(tenant);
    await repo().create(webhook);
    const rotation = {
      secret: 'whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmU=',
      previousSecret: webhook.secret,
      previousSecretExpiresAt: '2025-04-02T10:00:00.000Z',
    };

    // Act
    const updated = await repo().update(tenant, webhook.id, rotation, '2025-04-01T10:00:00.000Z');

    // Assert
    const expected = { ...webhook, ...rotation, updatedAt: '2025-04-01T10:00:00.000Z' };
    expect(updated).toEqual(expected);
    expect(await repo().get(tenant, webhook.id)).toEqual(expected);
    expect(await repo().getMany([{ ...tenant, id: webhook.id }])).toEqual([expected]);
    expect(await repo().list(tenant)).toEqual([expected]);
  });

  it("replaces the secrets only while the secret is the one expected (a rotation's conditional write)", async () => {
    // Arrange
    const tenant = newTenant();
    const webhook = newWebhook(tenant);
    await repo().create(webhook);
    const secretSet = {
      current: 'whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmU=',
      previous: [{ secret: webhook.secret, expiresAt: '2025-04-02T10:00:00.000Z' }],
    };
    const secrets = {
      secret: secretSet.current,
      previousSecret: webhook.secret,
      previousSecretExpiresAt: '2025-04-02T10:00:00.000Z',
      secretSet,
    };

    // Act
    const written = await repo().replaceSecrets(
      tenant,
      webhook.id,
      webhook.secret,
      secrets,
      '2025-04-01T10:00:00.000Z',
    );
    const overtaken = await repo().replaceSecrets(
      tenant,
      webhook.id,
      webhook.secret,
      { secret: 'whsec_late', secretSet: { current: 'whsec_late', previous: [] } },
      '2025-04-01T10:00:01.000Z',
    );
    const missing = await repo().replaceSecrets(
      tenant,
      'wh_missing',
      webhook.secret,
      secrets,
      '2025-04-01T10:00:00.000Z',
    );

    // Assert
    const expected = { ...webhook, ...secrets, updatedAt: '2025-04-01T10:00:00.000Z' };
    expect(written).toEqual(expected);
    expect(overtaken).toBeNull();
    expect(missing).toBeNull();
    expect(await repo().get(tenant, webhook.id, { consistent: true })).toEqual(expected);
    expect(await repo().list(tenant)).toEqual([expected]);
  });

  it('gives null for an unknown id', async () => {
    expect(await repo().get(newTenant(), 'wh_unknown')).toBeNull();
  });

  it('refuses to create the same id twice in a tenant with a ConflictError, keeping the first', async () => {
    // Arrange
    const tenant = newTenant();
    const webhook = newWebhook(tenant);
    await repo().create(webhook);

    // Act
    const act = repo().create({ ...webhook, url: 'https://attacker.example.com/' });

    // Assert
    await expect(act).rejects.toBeInstanceOf(ConflictError);
    expect(await repo().get(tenant, webhook.id)).toEqual(webhook);
  });

  it('isolates tenants: the same id under another account, or the same account in the other mode, is not found', async () => {
    // Arrange
    const tenant = newTenant('live');
    const webhook = newWebhook(tenant);
    await repo().create(webhook);

    // Act
    const otherAccount = await repo().get({ accountId: `${tenant.accountId}x`, mode: 'live' }, webhook.id);
    const otherMode = await repo().get({ accountId: tenant.accountId, mode: 'test' }, webhook.id);

    // Assert
    expect(otherAccount).toBeNull();
    expect(otherMode).toBeNull();
    expect(await repo().get(tenant, webhook.id)).toEqual(webhook);
  });

  it('keeps rows with the same id in two tenants apart', async () => {
    // Arrange
    const live = newTenant('live');
    const test: Tenant = { accountId: live.accountId, mode: 'test' };
    const inLive = newWebhook(live, { url: 'https://live.example.com/' });
    const inTest = { ...inLive, mode: 'test' as const, url: 'https://test.example.com/' };

    // Act
    await repo().create(inLive);
    await repo().create(inTest);

    // Assert
    expect(await repo().get(live, inLive.id)).toEqual(inLive);
    expect(await repo().get(test, inLive.id)).toEqual(inTest);
  });

  it('updates and returns the whole new webhook (ALL_NEW), and a later get agrees', async () => {
    // Arrange
    const tenant = newTenant();
    const webhook = newWebhook(tenant, { description: 'before' });
    await repo().create(webhook);
    const updatedAt = '2025-04-02T08:30:00.000Z';

    // Act
    const updated = await repo().update(
      tenant,
      webhook.id,
      { url: 'https://new.example.com/hook', events: ['email.bounced'], active: false, description: 'after' },
      updatedAt,
    );

    // Assert
    const expected: Webhook = {
      ...webhook,
      url: 'https://new.example.com/hook',
      events: ['email.bounced'],
      active: false,
      description: 'after',
      updatedAt,
    };
    expect(updated).toEqual(expected);
    expect(await repo().get(tenant, webhook.id)).toEqual(expected);
  });

  it('changes only the fields given: undefined ones are ignored, an empty change sets only updatedAt', async () => {
    // Arrange
    const tenant = newTenant();
    const webhook = newWebhook(tenant, { description: 'keep me' });
    await repo().create(webhook);

    // Act
    const paused = await repo().update(
      tenant,
      webhook.id,
      { active: false, url: undefined, description: undefined },
      '2025-04-02T00:00:00.000Z',
    );
    const touched = await repo().update(tenant, webhook.id, {}, '2025-04-03T00:00:00.000Z');

    // Assert
    expect(paused).toEqual({ ...webhook, active: false, updatedAt: '2025-04-02T00:00:00.000Z' });
    expect(touched).toEqual({ ...webhook, active: false, updatedAt: '2025-04-03T00:00:00.000Z' });
  });

  it('returns null when updating an unknown id, and creates nothing', async () => {
    // Arrange
    const tenant = newTenant();

    // Act
    const updated = await repo().update(tenant, 'wh_ghost', { active: false }, '2025-04-02T00:00:00.000Z');

    // Assert
    expect(updated).toBeNull();
    expect(await repo().get(tenant, 'wh_ghost')).toBeNull();
    expect(await repo().list(tenant)).toEqual([]);
  });

  it("returns null when another tenant updates a webhook's id, leaving the webhook unchanged", async () => {
    // Arrange
    const tenant = newTenant('live');
    const webhook = newWebhook(tenant);
    await repo().create(webhook);

    // Act
    const byOtherAccount = await repo().update(
      newTenant('live'),
      webhook.id,
      { active: false },
      '2025-05-01T00:00:00Z',
    );
    const byOtherMode = await repo().update(
      { accountId: tenant.accountId, mode: 'test' },
      webhook.id,
      { url: 'https://evil.example.com/' },
      '2025-05-01T00:00:00Z',
    );

    // Assert
    expect(byOtherAccount).toBeNull();
    expect(byOtherMode).toBeNull();
    expect(await repo().get(tenant, webhook.id)).toEqual(webhook);
  });

  it('deletes: true the first time, false the second, and the webhook is gone', async () => {
    // Arrange
    const tenant = newTenant();
    const webhook = newWebhook(tenant);
    await repo().create(webhook);

    // Act
    const first = await repo().delete(tenant, webhook.id);
    const second = await repo().delete(tenant, webhook.id);

    // Assert
    expect(first).toBe(true);
    expect(second).toBe(false);
    expect(await repo().get(tenant, webhook.id)).toBeNull();
    expect(await repo().list(tenant)).toEqual([]);
  });

  it('refuses a delete from another tenant (false) and keeps the webhook', async () => {
    // Arrange
    const tenant = newTenant('test');
    const webhook = newWebhook(tenant);
    await repo().create(webhook);

    // Act
    const byOtherAccount = await repo().delete(newTenant('test'), webhook.id);
    const byOtherMode = await repo().delete({ accountId: tenant.accountId, mode: 'live' }, webhook.id);

    // Assert
    expect(byOtherAccount).toBe(false);
    expect(byOtherMode).toBe(false);
    expect(await repo().get(tenant, webhook.id)).toEqual(webhook);
  });

  it('gets many webhooks in one call: across tenants, each once, leaving unknown ids and wrong tenants out', async () => {
    // Arrange
    const first = newTenant('live');
    const second = newTenant('test');
    const a = newWebhook(first);
    const b = newWebhook(first, { active: false, format: 'slack' });
    const c = newWebhook(second);
    for (const webhook of [a, b, c]) await repo().create(webhook);

    // Act
    const found = await repo().getMany([
      { ...first, id: a.id },
      { ...first, id: b.id },
      { ...first, id: a.id },
      { ...second, id: c.id },
      { ...second, id: a.id },
      { ...first, id: 'wh_unknown' },
    ]);

    // Assert
    expect(found.sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([a, b, c].sort((x, y) => (x.id < y.id ? -1 : 1)));
  });

  it('gets more webhooks than one BatchGetItem takes (100 keys)', async () => {
    // Arrange
    const tenant = newTenant();
    const webhooks = Array.from({ length: 130 }, (_, i) => newWebhook(tenant, {}, T0 + i));
    await Promise.all(webhooks.map((webhook) => repo().create(webhook)));

    // Act
    const found = await repo().getMany(webhooks.map((webhook) => ({ ...tenant, id: webhook.id })));

    // Assert
    expect(new Set(found.map((webhook) => webhook.id))).toEqual(new Set(webhooks.map((webhook) => webhook.id)));
    expect(found).toHaveLength(130);
  });

  it('gets nothing for no references', async () => {
    expect(await repo().getMany([])).toEqual([]);
  });

  it("lists one tenant's webhooks oldest first; other accounts and the other mode are separate", async () => {
    // Arrange: created out of order, with neighbours in the other mode and in another account.
    const live = newTenant('live');
    const test: Tenant = { accountId: live.accountId, mode: 'test' };
    const other = newTenant('live');
    const offsets = [3, 1, 4, 0, 2];
    const liveHooks = offsets.map((minute) => newWebhook(live, {}, T0 + minute * 60_000));
    for (const webhook of liveHooks) {
      await repo().create(webhook);
      await repo().create(newWebhook(other, {}, T0 + 1));
    }
    const testHook = newWebhook(test, { url: 'https://test-mode.example.com/' });
    await repo().create(testHook);

    // Act
    const listedLive = await repo().list(live);
    const listedTest = await repo().list(test);
    const listedOther = await repo().list(other);

    // Assert
    const oldestFirst = [...liveHooks].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    expect(listedLive).toEqual(oldestFirst);
    expect(listedTest).toEqual([testHook]);
    expect(listedOther).toHaveLength(5);
    expect(listedOther.every((w) => w.accountId === other.accountId && w.mode === 'live')).toBe(true);
  });

  it('lists nothing for a tenant without webhooks', async () => {
    expect(await repo().list(newTenant())).toEqual([]);
  });

  if (harness.raw) {
    const raw = harness.raw;

    it('stores the webhook under the tenant key `account#mode`', async () => {
      // Arrange
      const tenant = newTenant('live');
      const webhook = newWebhook(tenant);

      // Act
      await repo().create(webhook);

      // Assert
      const { db, table } = raw();
      const { Item } = await db.doc.send(
        new GetCommand({ TableName: table, Key: { tenant: `${tenant.accountId}#live`, id: webhook.id } }),
      );
      expect(Item).toEqual({ tenant: `${tenant.accountId}#live`, ...webhook });
    });

    it('refuses to return an item that is not a valid webhook (zod on read-back)', async () => {
      // Arrange
      const tenant = newTenant();
      const { db, table } = raw();
      const corrupt = { ...newWebhook(tenant), events: 'email.sent' };
      await db.doc.send(new PutCommand({ TableName: table, Item: { tenant: `${tenant.accountId}#test`, ...corrupt } }));

      // Act / Assert
      await expect(repo().get(tenant, corrupt.id)).rejects.toThrow();
      await expect(repo().list(tenant)).rejects.toThrow();
    });

    it('reads a webhook subscribed to an event type this release does not know, without it (a later release wrote it)', async () => {
      // Arrange
      const tenant = newTenant();
      const { db, table } = raw();
      const later = { ...newWebhook(tenant), events: ['email.sent', 'email.teleported'] };
      await db.doc.send(new PutCommand({ TableName: table, Item: { tenant: `${tenant.accountId}#test`, ...later } }));

      // Act / Assert: rolled back, the webhook still works for what this release sends.
      expect((await repo().get(tenant, later.id))?.events).toEqual(['email.sent']);
    });
  }
}
