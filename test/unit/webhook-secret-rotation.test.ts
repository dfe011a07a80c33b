// Secret rotation (domain/webhooks/secret-set.ts, app/webhooks/manage-webhooks.ts rotateSecret): which secrets sign
// after any sequence of rotations (a model-based property), the stored pair the previous release reads, and the
// use case's conditional write under forced interleavings on the in-memory fakes: two rotations that read the
// same set never both write it, a grace-0 rotation overtaken by another still revokes every earlier secret, and
// an overtaken rotation gives up with 409 after ROTATION_TRIES.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ManageWebhookDeps, ROTATION_TRIES, rotateSecret } from '../../lambdas/app/webhooks/manage-webhooks';
import type { Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import { ConflictError, LimitExceededError } from '../../lambdas/domain/errors';
import {
  MAX_PREVIOUS_SECRETS,
  replacedUntil,
  rotateSecretSet,
  type SecretSet,
  secretSetOf,
  signingSecrets,
  storedSecrets,
} from '../../lambdas/domain/webhooks/secret-set';
import { liveSecrets } from '../../lambdas/domain/webhooks/signature';
import { FakeClock, InMemoryWebhookRepository, seededRandom } from '../support/fakes';

const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);
const HOUR = 3600;
const TENANT: Tenant = { accountId: 'acct_rot', mode: 'test' };
const iso = (ms: number) => new Date(ms).toISOString();

describe('the secret set', () => {
  it('reads a webhook never rotated, or rotated by the previous release, from its secret and previous secret', () => {
    const pair = { secret: 'whsec_B', previousSecret: 'whsec_A', previousSecretExpiresAt: iso(T0 + 1000) };
    // A set left by this release, then a rotation by the previous one (it wrote the pair only): the set is stale.
    const stale: SecretSet = { current: 'whsec_A', previous: [{ secret: 'whsec_0', expiresAt: iso(T0 + 9e6) }] };

    expect(secretSetOf({ secret: 'whsec_A' })).toEqual({ current: 'whsec_A', previous: [] });
    expect(signingSecrets(secretSetOf(pair), T0)).toEqual(['whsec_B', 'whsec_A']);
    expect(signingSecrets(secretSetOf(pair), T0 + 1000)).toEqual(['whsec_B']);
    expect(signingSecrets(secretSetOf({ ...pair, secretSet: stale }), T0)).toEqual(['whsec_B', 'whsec_A']);
  });

  it('keeps every earlier secret through its grace period, cut to the latest grace; grace 0 revokes them all', () => {
    // Arrange: A → B (a day) → C (an hour): A's day is cut to C's hour.
    const b = rotateSecretSet({ current: 'A', previous: [] }, 'B', T0, 86_400);
    const c = b.ok ? rotateSecretSet(b.set, 'C', T0 + 1000, HOUR) : b;
    if (!c.ok) throw new Error('refused');

    // Act
    const d = rotateSecretSet(c.set, 'D', T0 + 2000, 0);

    // Assert
    expect(signingSecrets(c.set, T0 + 1000)).toEqual(['C', 'B', 'A']);
    expect(c.set.previous.map((p) => p.expiresAt)).toEqual([
      iso(T0 + 1000 + HOUR * 1000),
      iso(T0 + 1000 + HOUR * 1000),
    ]);
    expect(signingSecrets(c.set, T0 + 1000 + HOUR * 1000)).toEqual(['C']);
    expect(d.ok && signingSecrets(d.set, T0 + 2000)).toEqual(['D']);
    expect(d.ok && replacedUntil(d.set, T0 + 2000)).toBeNull();
    // The replaced secret stays, expired, for the signature check's hint; the revoked older ones are gone.
    expect(d.ok && d.set.previous).toEqual([{ secret: 'C', expiresAt: iso(T0 + 2000) }]);
  });

  it('stores the pair the previous release signs with: the current secret and the one just replaced', () => {
    const rotated = rotateSecretSet(
      { current: 'A', previous: [{ secret: '0', expiresAt: iso(T0 + 9e6) }] },
      'B',
      T0,
      60,
    );
    if (!rotated.ok) throw new Error('refused');

    const stored = storedSecrets(rotated.set);

    expect(stored).toEqual({
      secret: 'B',
      previousSecret: 'A',
      previousSecretExpiresAt: iso(T0 + 60_000),
      secretSet: rotated.set,
    });
    expect(liveSecrets(stored, T0)).toEqual(['B', 'A', '0']);
    // What the previous release signs with: the pair.
    expect(liveSecrets({ ...stored, secretSet: undefined }, T0)).toEqual(['B', 'A']);
  });

  it(`refuses a rotation that would leave more than ${MAX_PREVIOUS_SECRETS} earlier secrets signing`, () => {
    let set: SecretSet = { current: 's0', previous: [] };
    for (let i = 1; i <= MAX_PREVIOUS_SECRETS; i += 1) {
      const next = rotateSecretSet(set, `s${i}`, T0 + i, HOUR);
      if (!next.ok) throw new Error(`refused at ${i}`);
      set = next.set;
    }

    expect(rotateSecretSet(set, 'one more', T0 + 100, HOUR)).toEqual({ ok: false, reason: 'too_many_secrets' });
    expect(rotateSecretSet(set, 'one more', T0 + 100, 0).ok).toBe(true);
    expect(rotateSecretSet(set, 'one more', T0 + HOUR * 1000 + 100, HOUR).ok).toBe(true);
  });

  it('signs with exactly the secrets a model of the rules says, after any sequence of rotations (property)', () => {
    const step = fc.record({
      after: fc.integer({ min: 0, max: 4 * HOUR * 1000 }),
      grace: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 * HOUR })),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        // The model: each secret's expiry (Infinity: the current one), cut by every later rotation's grace.
        const model = new Map<string, number>([['s0', Number.POSITIVE_INFINITY]]);
        let set: SecretSet = { current: 's0', previous: [] };
        let now = T0;
        for (const [i, { after, grace }] of steps.entries()) {
          now += after;
          const until = now + grace * 1000;
          const signing = [...model].filter(([, expiry]) => expiry > now).length;
          const rotated = rotateSecretSet(set, `s${i + 1}`, now, grace);
          expect(rotated.ok).toBe(grace === 0 || signing <= MAX_PREVIOUS_SECRETS);
          if (!rotated.ok) continue;
          for (const [secret, expiry] of model) model.set(secret, Math.min(expiry, until));
          model.set(`s${i + 1}`, Number.POSITIVE_INFINITY);
          set = rotated.set;
          const expected = [...model]
            .filter(([, expiry]) => expiry > now)
            .map(([secret]) => secret)
            .reverse();
          expect(signingSecrets(set, now)).toEqual(expected);
          expect(signingSecrets(set, now + 1)).toEqual(expected.filter((s) => (model.get(s) ?? 0) > now + 1));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('rotateSecret: a conditional write on the secret set', () => {
  function harness() {
    const webhooks = new InMemoryWebhookRepository();
    const clock = new FakeClock(T0);
    const deps: ManageWebhookDeps = {
      webhooks,
      clock,
      random: seededRandom('rotation'),
      urlVerifier: { problem: async () => null },
    };
    const webhook: Webhook = {
      ...TENANT,
      id: 'wh_rot',
      url: 'https://hooks.example.com/',
      events: ['email.sent'],
      format: 'standard',
      secret: 'whsec_leaked',
      active: true,
      createdAt: iso(T0),
      updatedAt: iso(T0),
    };
    webhooks.items.set(`${TENANT.accountId}#${TENANT.mode}#${webhook.id}`, webhook);
    return { webhooks, deps, webhook };
  }

  /** Holds every read until `count` reads are waiting, then lets them all go: rotations that read the same set. */
  function readTogether(webhooks: InMemoryWebhookRepository, count: number) {
    const read = webhooks.get.bind(webhooks);
    const waiting: (() => void)[] = [];
    let left = count;
    webhooks.get = async (...args) => {
      const found = await read(...args);
      if (left > 0) {
        left -= 1;
        // Released in the order they read: the first reader writes first.
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (left === 0) for (const go of waiting.splice(0)) go();
        });
      }
      return found;
    };
  }

  it('two rotations that read the same set: both answer, and both secrets sign (the second read again)', async () => {
    // Arrange
    const { webhooks, deps, webhook } = harness();
    readTogether(webhooks, 2);

    // Act
    const [a, b] = await Promise.all([
      rotateSecret(deps, TENANT, webhook.id, HOUR),
      rotateSecret(deps, TENANT, webhook.id, HOUR),
    ]);

    // Assert
    const stored = await webhooks.get(TENANT, webhook.id);
    if (!stored) throw new Error('gone');
    expect(a.webhook.secret).not.toBe(b.webhook.secret);
    expect(liveSecrets(stored, T0).sort()).toEqual([a.webhook.secret, b.webhook.secret, 'whsec_leaked'].sort());
  });

  it('grace 0 overtaken by a one-day rotation that read the same set: the leaked secret still stops at once', async () => {
    // Arrange: both read the leaked secret; the one-day rotation writes first.
    const { webhooks, deps, webhook } = harness();
    readTogether(webhooks, 2);

    // Act
    const oneDay = rotateSecret(deps, TENANT, webhook.id, 86_400);
    const revokeNow = rotateSecret(deps, TENANT, webhook.id, 0);
    const [day, now] = await Promise.all([oneDay, revokeNow]);

    // Assert
    const stored = await webhooks.get(TENANT, webhook.id);
    if (!stored) throw new Error('gone');
    expect(liveSecrets(stored, T0)).toEqual([now.webhook.secret]);
    expect(liveSecrets(stored, T0)).not.toContain(day.webhook.secret);
    expect(now.previousSecretExpiresAt).toBeNull();
  });

  it(`gives up with 409 rotation_conflict when overtaken ${ROTATION_TRIES} times, having written nothing`, async () => {
    // Arrange: every write of this rotation finds the secret changed by another one just before.
    const { webhooks, deps, webhook } = harness();
    const write = webhooks.replaceSecrets.bind(webhooks);
    let overtaken = 0;
    webhooks.replaceSecrets = async (tenant, id, expected, secrets, at) => {
      overtaken += 1;
      await webhooks.update(tenant, id, { secret: `whsec_other${overtaken}` }, at);
      return write(tenant, id, expected, secrets, at);
    };

    // Act
    const act = rotateSecret(deps, TENANT, webhook.id, HOUR);

    // Assert
    await expect(act).rejects.toSatisfy(
      (error) => error instanceof ConflictError && error.code === 'rotation_conflict',
    );
    expect(overtaken).toBe(ROTATION_TRIES);
    expect((await webhooks.get(TENANT, webhook.id))?.secretSet).toBeUndefined();
  });

  it(`refuses with 422 a rotation past ${MAX_PREVIOUS_SECRETS} earlier secrets in grace; grace 0 still works`, async () => {
    const { deps, webhook } = harness();
    for (let i = 0; i < MAX_PREVIOUS_SECRETS; i += 1) await rotateSecret(deps, TENANT, webhook.id, HOUR);

    await expect(rotateSecret(deps, TENANT, webhook.id, HOUR)).rejects.toBeInstanceOf(LimitExceededError);
    const revoked = await rotateSecret(deps, TENANT, webhook.id, 0);
    expect(liveSecrets(revoked.webhook, T0)).toEqual([revoked.webhook.secret]);
  });
});
