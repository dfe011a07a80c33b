// Contract suite for the DeliveryRepository port, written once and run against DynamoDeliveryRepository
// (dynalite, DynamoDB Local) and InMemoryDeliveryRepository: claimed creation, conditional claims and records
// (DESIGN §4: a duplicated job never sends or counts twice), TTL-filtered reads (DESIGN §5), the newest-first
// log with `after` cursors, the status and error-class filters and exact has_more, and the reconciler's due list
// (retries only: a first attempt in flight is its queue's). On DynamoDB the log spans a webhook's 16 shards and
// the unsuffixed partition of rows written before them, and rows are stored compact: the layout tests check both.
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import { DELIVERY_SHARDS, DynamoDeliveryRepository, shardKeyOf } from '../../../lambdas/adapters/dynamodb/deliveries';
import { shardOf } from '../../../lambdas/adapters/dynamodb/shards';
import type { Delivery, DeliveryRepository } from '../../../lambdas/app/webhooks/ports';
import { idTime, timeOrderedId } from '../../../lambdas/domain/ids';
import type { DeliveryStatus } from '../../../lambdas/domain/webhooks/delivery';
import type { ErrorClass } from '../../../lambdas/domain/webhooks/error-class';
import type { RepositoryHarness } from './harness';

/** "Now" for every read: rows expire relative to it. */
const NOW = Date.UTC(2025, 3, 1, 12, 0, 0, 500);
const NOW_S = Math.floor(NOW / 1000);
const T0 = NOW - 3_600_000;

const newWebhookId = () => `wh_${randomBytes(8).toString('hex')}`;

/** A fresh row as attemptDelivery creates it: pending, claimed for attempt 1, due at creation. */
function newDelivery(webhookId: string, createdAt = T0, overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: timeOrderedId('dlv', createdAt, randomBytes),
    webhookId,
    accountId: 'acct_contract',
    mode: 'test',
    eventId: timeOrderedId('evt', createdAt, randomBytes),
    event: 'email.delivered',
    format: 'standard',
    payload: '{"type":"email.delivered","data":{"n":1}}',
    status: 'pending',
    attempts: 0,
    maxAttempts: 5,
    attemptLog: [],
    response: '',
    nextAttemptAt: createdAt,
    deliveredAt: null,
    createdAt,
    claim: { attempt: 1, until: createdAt + 30_000 },
    ...overrides,
  };
}

/** The row after attempt `attempts` ended in `status` (claim released; final rows get a TTL). */
function after(delivery: Delivery, status: DeliveryStatus, changes: Partial<Delivery> = {}): Delivery {
  const { claim: _claim, ...rest } = delivery;
  const attempts = delivery.attempts + 1;
  const at = delivery.createdAt + attempts * 1_000;
  return {
    ...rest,
    status,
    attempts,
    attemptLog: [
      ...delivery.attemptLog,
      {
        at,
        statusCode: status === 'succeeded' ? 200 : 503,
        durationMs: 42,
        error: status === 'succeeded' ? null : 'HTTP 503',
      },
    ],
    response: status === 'succeeded' ? 'ok' : 'unavailable',
    nextAttemptAt: status === 'pending' ? at + 30_000 : null,
    deliveredAt: status === 'succeeded' ? at + 42 : null,
    ...(status === 'pending' ? {} : { expiresAt: NOW_S + 30 * 86_400 }),
    ...changes,
  };
}

/** `after`, with the class and timings the attempt recorded (entries from `after` alone are stored-before ones). */
function afterClassed(delivery: Delivery, status: DeliveryStatus, errorClass: ErrorClass | null): Delivery {
  const next = after(delivery, status);
  const last = next.attemptLog.at(-1);
  if (!last) throw new Error('after() always logs an attempt');
  const timings = { dnsMs: null, connectMs: 3, tlsMs: null, ttfbMs: errorClass === 'timeout' ? null : 12 };
  return { ...next, attemptLog: [...next.attemptLog.slice(0, -1), { ...last, errorClass, timings }] };
}

export function deliveryRepositoryContract(harness: RepositoryHarness<DeliveryRepository>): void {
  const repo = () => harness.shared();

  /** `count` rows of one webhook, one second apart, stored in shuffled order; returned newest first. */
  async function seedLog(
    webhookId: string,
    count: number,
    shape: (delivery: Delivery, index: number) => Delivery = (d) => d,
    target: DeliveryRepository = repo(),
  ): Promise<Delivery[]> {
    const rows = Array.from({ length: count }, (_, i) => shape(newDelivery(webhookId, T0 + i * 1_000), i));
    const shuffled = rows.map((row, i) => ({ row, key: (i * 7) % count })).sort((a, b) => a.key - b.key);
    for (const { row } of shuffled) expect(await target.createClaimed(row)).toBe(true);
    return [...rows].reverse();
  }

  const ids = (rows: readonly Pick<Delivery, 'id'>[]) => rows.map((row) => row.id);

  // --- createClaimed ---------------------------------------------------------------------------------------

  it('createClaimed stores the row as given (claim included) and get returns it exactly', async () => {
    // Arrange
    const delivery = newDelivery(newWebhookId());

    // Act
    const created = await repo().createClaimed(delivery);

    // Assert
    expect(created).toBe(true);
    expect(await repo().get(delivery.webhookId, delivery.id, NOW)).toEqual(delivery);
  });

  it('createClaimed a second time returns false and keeps the first row (a duplicate job)', async () => {
    // Arrange
    const delivery = newDelivery(newWebhookId());
    await repo().createClaimed(delivery);

    // Act
    const again = await repo().createClaimed({
      ...delivery,
      payload: '{"other":true}',
      claim: { attempt: 1, until: 1 },
    });

    // Assert
    expect(again).toBe(false);
    expect(await repo().get(delivery.webhookId, delivery.id, NOW)).toEqual(delivery);
  });

  it('of parallel createClaimed calls for one id, exactly one wins', async () => {
    // Arrange
    const delivery = newDelivery(newWebhookId());

    // Act
    const results = await Promise.all(Array.from({ length: 8 }, () => repo().createClaimed(delivery)));

    // Assert
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  // --- claim ---------------------------------------------------------------------------------------------

  it('claim() with the matching attemptsBefore, an allowed status and no claim returns the full claimed row', async () => {
    // Arrange: attempt 1 failed and was recorded (claim released), attempt 2 is due.
    const first = newDelivery(newWebhookId());
    await repo().createClaimed(first);
    const pending = after(first, 'pending');
    expect(await repo().record(pending, 1)).toBe(true);
    const claim = { attempt: 2, until: NOW + 30_000 };

    // Act
    const claimed = await repo().claim(
      first.webhookId,
      first.id,
      { attemptsBefore: 1, statuses: ['pending'], nowMs: NOW },
      claim,
    );

    // Assert
    expect(claimed).toEqual({ ...pending, claim, claimedAt: NOW });
    expect(await repo().get(first.webhookId, first.id, NOW)).toEqual({ ...pending, claim, claimedAt: NOW });
  });

  it('claim() is refused (null) when attempts is not attemptsBefore, and the row is unchanged', async () => {
    // Arrange
    const first = newDelivery(newWebhookId());
    await repo().createClaimed(first);
    const pending = after(first, 'pending');
    await repo().record(pending, 1);

    // Act
    const stale = await repo().claim(
      first.webhookId,
      first.id,
      { attemptsBefore: 0, statuses: ['pending'], nowMs: NOW },
      { attempt: 1, until: NOW + 30_000 },
    );
    const ahead = await repo().claim(
      first.webhookId,
      first.id,
      { attemptsBefore: 2, statuses: ['pending'], nowMs: NOW },
      { attempt: 3, until: NOW + 30_000 },
    );

    // Assert
    expect(stale).toBeNull();
    expect(ahead).toBeNull();
    expect(await repo().get(first.webhookId, first.id, NOW)).toEqual(pending);
  });

  it('claim() is refused when the status is not one of the allowed ones; a list of several is honoured', async () => {
    // Arrange
    const first = newDelivery(newWebhookId());
    await repo().createClaimed(first);
    const succeeded = after(first, 'succeeded');
    await repo().record(succeeded, 1);

    // Act
    const asPending = await repo().claim(
      first.webhookId,
      first.id,
      { attemptsBefore: 1, statuses: ['pending'], nowMs: NOW },
      { attempt: 2, until: NOW + 30_000 },
    );
    const asFinal = await repo().claim(
      first.webhookId,
      first.id,
      { attemptsBefore: 1, statuses: ['failed', 'succeeded'], nowMs: NOW },
      { attempt: 2, until: NOW + 30_000 },
    );

    // Assert
    expect(asPending).toBeNull();
    expect(asFinal).toEqual({ ...succeeded, claim: { attempt: 2, until: NOW + 30_000 }, claimedAt: NOW });
  });

  it('claim() is refused while another claim is unexpired (until > now and until = now), taken once it lapsed', async () => {
    // Arrange: a fresh row claimed for attempt 1 until NOW (its holder crashed), retried by a redelivered job.
    const delivery = newDelivery(newWebhookId(), T0, { claim: { attempt: 1, until: NOW } });
    await repo().createClaimed(delivery);
    const expect0 = { attemptsBefore: 0, statuses: ['pending'] as const };
    const takeover = { attempt: 1, until: NOW + 60_000 };

    // Act
    const whileHeld = await repo().claim(delivery.webhookId, delivery.id, { ...expect0, nowMs: NOW - 1 }, takeover);
    const atExpiry = await repo().claim(delivery.webhookId, delivery.id, { ...expect0, nowMs: NOW }, takeover);
    const lapsed = await repo().claim(delivery.webhookId, delivery.id, { ...expect0, nowMs: NOW + 1 }, takeover);
    const secondTakeover = await repo().claim(
      delivery.webhookId,
      delivery.id,
      { ...expect0, nowMs: NOW + 2 },
      { attempt: 1, until: NOW + 90_000 },
    );

    // Assert
    expect(whileHeld).toBeNull();
    expect(atExpiry).toBeNull();
    expect(lapsed).toEqual({ ...delivery, claim: takeover, claimedAt: NOW + 1 });
    expect(secondTakeover).toBeNull();
  });

  it('claim() takes an unexpired claim of an earlier epoch (a runtime that died), not one of the same epoch', async () => {
    // Arrange: claimed for an hour by the runtime of epoch 5, which was killed.
    const delivery = newDelivery(newWebhookId(), T0, { claim: { attempt: 1, until: NOW + 3_600_000, epoch: 5 } });
    await repo().createClaimed(delivery);
    const expect0 = { attemptsBefore: 0, statuses: ['pending'] as const, nowMs: NOW };

    // Act
    const sameEpoch = await repo().claim(delivery.webhookId, delivery.id, expect0, {
      attempt: 1,
      until: NOW + 60_000,
      epoch: 5,
    });
    const restarted = { attempt: 1, until: NOW + 60_000, epoch: 6 };
    const nextEpoch = await repo().claim(delivery.webhookId, delivery.id, expect0, restarted);

    // Assert
    expect(sameEpoch).toBeNull();
    expect(nextEpoch).toEqual({ ...delivery, claim: restarted, claimedAt: NOW });
  });

  it('claim() with claimedBefore is refused when an attempt was claimed at or after it, even once that attempt ended', async () => {
    // Arrange: a final row whose latest attempt was claimed at NOW - 10 and has ended (claim released).
    const first = newDelivery(newWebhookId(), T0, { claimedAt: NOW - 10 });
    await repo().createClaimed(first);
    const failed = after(first, 'failed');
    await repo().record(failed, 1);
    const final = { attemptsBefore: 1, statuses: ['failed', 'succeeded'] as const, nowMs: NOW };
    const claim = { attempt: 2, until: NOW + 30_000 };

    // Act: requests that arrived before that claim, in its millisecond, and after it.
    const before = await repo().claim(first.webhookId, first.id, { ...final, claimedBefore: NOW - 11 }, claim);
    const sameMs = await repo().claim(first.webhookId, first.id, { ...final, claimedBefore: NOW - 10 }, claim);
    const afterIt = await repo().claim(first.webhookId, first.id, { ...final, claimedBefore: NOW - 9 }, claim);

    // Assert: only the later request claims; the claim time is stored and survives the record.
    expect(before).toBeNull();
    expect(sameMs).toBeNull();
    expect(afterIt).toEqual({ ...failed, claim, claimedAt: NOW });
    const retried = after(afterIt as Delivery, 'succeeded');
    expect(await repo().record(retried, 2)).toBe(true);
    expect((await repo().get(first.webhookId, first.id, NOW))?.claimedAt).toBe(NOW);
    const late = await repo().claim(
      first.webhookId,
      first.id,
      { ...final, attemptsBefore: 2, claimedBefore: NOW },
      claim,
    );
    expect(late).toBeNull();
  });

  it('claim() with claimedBefore is refused when the latest attempt settled at or after it (it was in flight then)', async () => {
    // Arrange: a final row whose latest attempt was claimed at NOW - 10 and settled at NOW - 5.
    const first = newDelivery(newWebhookId(), T0, { claimedAt: NOW - 10 });
    await repo().createClaimed(first);
    const failed = { ...after(first, 'failed'), settledAt: NOW - 5 };
    await repo().record(failed, 1);
    const final = { attemptsBefore: 1, statuses: ['failed', 'succeeded'] as const, nowMs: NOW };
    const claim = { attempt: 2, until: NOW + 30_000 };

    // Act: requests that arrived while it was in flight, in the millisecond it settled, and after.
    const during = await repo().claim(first.webhookId, first.id, { ...final, claimedBefore: NOW - 7 }, claim);
    const sameMs = await repo().claim(first.webhookId, first.id, { ...final, claimedBefore: NOW - 5 }, claim);
    const afterIt = await repo().claim(first.webhookId, first.id, { ...final, claimedBefore: NOW - 4 }, claim);

    // Assert
    expect(during).toBeNull();
    expect(sameMs).toBeNull();
    expect(afterIt).toEqual({ ...failed, claim, claimedAt: NOW });
  });

  it('claim() with claimedBefore is allowed on a row that never stored a claim time (written before it existed)', async () => {
    // Arrange
    const first = newDelivery(newWebhookId());
    await repo().createClaimed(first);
    const failed = after(first, 'failed');
    await repo().record(failed, 1);
    const claim = { attempt: 2, until: NOW + 30_000 };

    // Act
    const claimed = await repo().claim(
      first.webhookId,
      first.id,
      { attemptsBefore: 1, statuses: ['failed'], nowMs: NOW, claimedBefore: NOW - 1 },
      claim,
    );

    // Assert
    expect(claimed).toEqual({ ...failed, claim, claimedAt: NOW });
  });

  it('of parallel claims for the same attempt, exactly one wins', async () => {
    // Arrange
    const first = newDelivery(newWebhookId());
    await repo().createClaimed(first);
    await repo().record(after(first, 'pending'), 1);

    // Act
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        repo().claim(
          first.webhookId,
          first.id,
          { attemptsBefore: 1, statuses: ['pending'], nowMs: NOW },
          { attempt: 2, until: NOW + 1_000 + i },
        ),
      ),
    );

    // Assert
    const winners = results.filter((r) => r !== null);
    expect(winners).toHaveLength(1);
    expect(await repo().get(first.webhookId, first.id, NOW)).toEqual(winners[0]);
  });

  it('claim() of an unknown row is null and creates nothing', async () => {
    // Arrange
    const webhookId = newWebhookId();

    // Act
    const claimed = await repo().claim(
      webhookId,
      'dlv_ghost',
      { attemptsBefore: 0, statuses: ['pending', 'failed', 'succeeded'], nowMs: NOW },
      { attempt: 1, until: NOW + 1_000 },
    );

    // Assert
    expect(claimed).toBeNull();
    expect(await repo().get(webhookId, 'dlv_ghost', NOW)).toBeNull();
    expect(await repo().list(webhookId, { limit: 10 }, NOW)).toEqual({ items: [], hasMore: false });
  });

  // --- record --------------------------------------------------------------------------------------------

  it('record() stores the result while the claim for that attempt is held, replacing the row', async () => {
    // Arrange
    const delivery = newDelivery(newWebhookId());
    await repo().createClaimed(delivery);
    const succeeded = after(delivery, 'succeeded');

    // Act
    const recorded = await repo().record(succeeded, 1);

    // Assert
    expect(recorded).toBe(true);
    const stored = await repo().get(delivery.webhookId, delivery.id, NOW);
    expect(stored).toEqual(succeeded);
    expect(stored).not.toHaveProperty('claim');
  });

  it('record() is refused once the claim was released: the same attempt cannot be recorded twice', async () => {
    // Arrange
    const delivery = newDelivery(newWebhookId());
    await repo().createClaimed(delivery);
    const failedOnce = after(delivery, 'pending');
    await repo().record(failedOnce, 1);

    // Act: a duplicate holder of attempt 1 reports a success.
    const duplicate = await repo().record(after(delivery, 'succeeded'), 1);

    // Assert
    expect(duplicate).toBe(false);
    expect(await repo().get(delivery.webhookId, delivery.id, NOW)).toEqual(failedOnce);
  });

  it("refuses a stale holder's record once the row is claimed for a later attempt", async () => {
    // Arrange: attempt 1 recorded, attempt 2 claimed by a new holder.
    const delivery = newDelivery(newWebhookId());
    await repo().createClaimed(delivery);
    const failedOnce = after(delivery, 'pending');
    await repo().record(failedOnce, 1);
    const claimed = await repo().claim(
      delivery.webhookId,
      delivery.id,
      { attemptsBefore: 1, statuses: ['pending'], nowMs: NOW },
      { attempt: 2, until: NOW + 30_000 },
    );

    // Act: the holder of attempt 1 (or a confused one) records over it.
    const stale = await repo().record(after(delivery, 'succeeded'), 1);
    const wrongAttempt = await repo().record(after(failedOnce, 'succeeded'), 3);

    // Assert
    expect(stale).toBe(false);
    expect(wrongAttempt).toBe(false);
    expect(await repo().get(delivery.webhookId, delivery.id, NOW)).toEqual(claimed);
  });

  it('record() of an unknown row is refused and creates nothing', async () => {
    // Arrange
    const delivery = after(newDelivery(newWebhookId()), 'succeeded');

    // Act
    const recorded = await repo().record(delivery, 1);

    // Assert
    expect(recorded).toBe(false);
    expect(await repo().get(delivery.webhookId, delivery.id, NOW)).toBeNull();
  });

  // --- get -----------------------------------------------------------------------------------------------

  it('get() never returns a row whose expiresAt ≤ now (TTL passed, not yet deleted)', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const [gone, boundary, alive] = [NOW_S - 1, NOW_S, NOW_S + 1].map((expiresAt) =>
      after(newDelivery(webhookId), 'failed', { expiresAt }),
    ) as [Delivery, Delivery, Delivery];
    for (const row of [gone, boundary, alive]) await repo().createClaimed(row);

    // Act / Assert
    expect(await repo().get(webhookId, gone.id, NOW)).toBeNull();
    expect(await repo().get(webhookId, boundary.id, NOW)).toBeNull();
    expect(await repo().get(webhookId, alive.id, NOW)).toEqual(alive);
    expect(await repo().get(webhookId, alive.id, (NOW_S + 1) * 1000)).toBeNull();
  });

  it('get() is null for an unknown id, and for a known id under another webhook', async () => {
    // Arrange
    const delivery = newDelivery(newWebhookId());
    await repo().createClaimed(delivery);

    // Act / Assert
    expect(await repo().get(delivery.webhookId, 'dlv_unknown', NOW)).toBeNull();
    expect(await repo().get(newWebhookId(), delivery.id, NOW)).toBeNull();
  });

  // --- getMany -------------------------------------------------------------------------------------------

  it('getMany() returns the rows under the keys in the order given, each once; unknown and expired ones left out', async () => {
    // Arrange
    const [hookA, hookB] = [newWebhookId(), newWebhookId()];
    const a1 = after(newDelivery(hookA, T0), 'succeeded');
    const a2 = newDelivery(hookA, T0 + 1_000);
    const b1 = after(newDelivery(hookB, T0 + 2_000), 'failed');
    const expired = after(newDelivery(hookB, T0 + 3_000), 'failed', { expiresAt: NOW_S });
    for (const row of [a1, a2, b1, expired]) await repo().createClaimed(row);
    const key = (d: Delivery) => ({ webhookId: d.webhookId, id: d.id });

    // Act
    const rows = await repo().getMany(
      [
        key(b1),
        { webhookId: hookA, id: 'dlv_unknown' },
        key(a2),
        // A known id under another webhook is another key: nothing there.
        { webhookId: hookB, id: a1.id },
        key(expired),
        key(a1),
        key(b1),
      ],
      NOW,
    );

    // Assert
    expect(rows).toEqual([b1, a2, a1]);
    expect(await repo().getMany([], NOW)).toEqual([]);
  });

  it('getMany() reads more keys than one BatchGetItem takes (100)', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 130);
    const keys = log.map(({ webhookId, id }) => ({ webhookId, id }));

    // Act
    const rows = await repo().getMany(keys, NOW);

    // Assert
    expect(ids(rows)).toEqual(ids(log));
  });

  // --- list ----------------------------------------------------------------------------------------------

  it('lists newest first, only the webhook’s own rows', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 6);
    await seedLog(newWebhookId(), 3);

    // Act
    const page = await repo().list(webhookId, { limit: 20 }, NOW);

    // Assert
    expect(page).toEqual({ items: log, hasMore: false });
  });

  it('lists nothing for a webhook without deliveries', async () => {
    expect(await repo().list(newWebhookId(), { limit: 20 }, NOW)).toEqual({ items: [], hasMore: false });
  });

  it('has_more is exact at page boundaries: limit = count-1, count, count+1', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 4);

    // Act
    const short = await repo().list(webhookId, { limit: 3 }, NOW);
    const exact = await repo().list(webhookId, { limit: 4 }, NOW);
    const roomy = await repo().list(webhookId, { limit: 5 }, NOW);
    const one = await repo().list(webhookId, { limit: 1 }, NOW);

    // Assert
    expect(short).toEqual({ items: log.slice(0, 3), hasMore: true });
    expect(exact).toEqual({ items: log, hasMore: false });
    expect(roomy).toEqual({ items: log, hasMore: false });
    expect(one).toEqual({ items: log.slice(0, 1), hasMore: true });
  });

  it('walks the whole log with `after` cursors (older entries), has_more false exactly on the last page', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 7);

    // Act
    const pages: { ids: string[]; hasMore: boolean }[] = [];
    let cursor: string | undefined;
    do {
      const page = await repo().list(webhookId, { limit: 3, ...(cursor ? { after: cursor } : {}) }, NOW);
      pages.push({ ids: ids(page.items), hasMore: page.hasMore });
      cursor = page.hasMore ? page.items.at(-1)?.id : undefined;
    } while (cursor);

    // Assert
    expect(pages).toEqual([
      { ids: ids(log.slice(0, 3)), hasMore: true },
      { ids: ids(log.slice(3, 6)), hasMore: true },
      { ids: ids(log.slice(6)), hasMore: false },
    ]);
  });

  it('after the second-to-last row with limit 1 gives the last row and has_more false; after the last, nothing', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 3);

    // Act
    const last = await repo().list(webhookId, { limit: 1, after: log[1]?.id }, NOW);
    const beyond = await repo().list(webhookId, { limit: 1, after: log[2]?.id }, NOW);

    // Assert
    expect(last).toEqual({ items: [log[2]], hasMore: false });
    expect(beyond).toEqual({ items: [], hasMore: false });
  });

  it('an `after` cursor that is no row (e.g. one since expired) still returns the older entries', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 4, (d, i) => (i === 2 ? after(d, 'failed', { expiresAt: NOW_S - 5 }) : d));
    const expired = log[1] as Delivery;

    // Act
    const page = await repo().list(webhookId, { limit: 5, after: expired.id }, NOW);
    // A prefix of the newest id's time part: no row has it, it sorts between the newest row and the expired one.
    const fromMissing = await repo().list(webhookId, { limit: 5, after: log[0]?.id.slice(0, 14) }, NOW);

    // Assert
    expect(page).toEqual({ items: log.slice(2), hasMore: false });
    expect(ids(fromMissing.items)).toEqual(ids([log[2], log[3]] as Delivery[]));
  });

  it('never lists expired rows; expired rows in the middle of a page do not shorten it', async () => {
    // Arrange: 8 rows; the 2nd and 3rd newest and the 5th newest have expired.
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 8, (d, i) =>
      i === 5 || i === 6 || i === 3 ? after(d, 'succeeded', { expiresAt: NOW_S }) : d,
    );
    const live = log.filter((d) => d.expiresAt === undefined);
    expect(live).toHaveLength(5);

    // Act
    const first = await repo().list(webhookId, { limit: 3 }, NOW);
    const rest = await repo().list(webhookId, { limit: 3, after: first.items.at(-1)?.id }, NOW);
    const all = await repo().list(webhookId, { limit: 5 }, NOW);
    const allButOne = await repo().list(webhookId, { limit: 4 }, NOW);

    // Assert
    expect(first).toEqual({ items: live.slice(0, 3), hasMore: true });
    expect(rest).toEqual({ items: live.slice(3), hasMore: false });
    expect(all).toEqual({ items: live, hasMore: false });
    expect(allButOne).toEqual({ items: live.slice(0, 4), hasMore: true });
  });

  it('fills a page across a run of expired rows longer than the page', async () => {
    // Arrange: newest row live, then 12 expired, then 3 live.
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 16, (d, i) =>
      i >= 3 && i < 15 ? after(d, 'failed', { expiresAt: NOW_S - 60 }) : d,
    );
    const live = log.filter((d) => d.expiresAt === undefined);

    // Act
    const page = await repo().list(webhookId, { limit: 2 }, NOW);
    const whole = await repo().list(webhookId, { limit: 4 }, NOW);
    const acrossTheRun = await repo().list(webhookId, { limit: 3, after: live[0]?.id }, NOW);

    // Assert
    expect(page).toEqual({ items: live.slice(0, 2), hasMore: true });
    expect(whole).toEqual({ items: live, hasMore: false });
    expect(acrossTheRun).toEqual({ items: live.slice(1), hasMore: false });
  });

  it('filters by status (failed and pending from their indexes, succeeded from the log), newest first, with exact has_more', async () => {
    // Arrange: statuses cycle pending, succeeded, failed (final rows live for 30 days).
    const webhookId = newWebhookId();
    const cycle: DeliveryStatus[] = ['pending', 'succeeded', 'failed'];
    const log = await seedLog(webhookId, 9, (d, i) => {
      const status = cycle[i % 3] as DeliveryStatus;
      return status === 'pending' ? d : after(d, status);
    });
    const of = (status: DeliveryStatus) => log.filter((d) => d.status === status);

    // Act
    const failed = await repo().list(webhookId, { status: 'failed', limit: 3 }, NOW);
    const succeeded = await repo().list(webhookId, { status: 'succeeded', limit: 2 }, NOW);
    const pending = await repo().list(webhookId, { status: 'pending', limit: 10 }, NOW);

    // Assert
    expect(failed).toEqual({ items: of('failed'), hasMore: false });
    expect(succeeded).toEqual({ items: of('succeeded').slice(0, 2), hasMore: true });
    expect(pending).toEqual({ items: of('pending'), hasMore: false });
  });

  it('pages within a status with `after`, and does not mix in another webhook with the same status', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 10, (d, i) => (i % 2 === 0 ? after(d, 'failed') : after(d, 'succeeded')));
    await seedLog(newWebhookId(), 5, (d) => after(d, 'failed'));
    const failed = log.filter((d) => d.status === 'failed');

    // Act
    const pages: Delivery[][] = [];
    const more: boolean[] = [];
    let cursor: string | undefined;
    do {
      const page = await repo().list(
        webhookId,
        { status: 'failed', limit: 2, ...(cursor ? { after: cursor } : {}) },
        NOW,
      );
      pages.push(page.items);
      more.push(page.hasMore);
      cursor = page.hasMore ? page.items.at(-1)?.id : undefined;
    } while (cursor);

    // Assert
    expect(pages).toEqual([failed.slice(0, 2), failed.slice(2, 4), failed.slice(4)]);
    expect(more).toEqual([true, true, false]);
  });

  it('a status page after a cursor of another status returns the older rows of the filtered status', async () => {
    // Arrange
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 6, (d, i) => (i % 2 === 0 ? after(d, 'failed') : after(d, 'succeeded')));
    const cursor = log.find((d) => d.status === 'succeeded') as Delivery;

    // Act
    const page = await repo().list(webhookId, { status: 'failed', limit: 5, after: cursor.id }, NOW);

    // Assert
    expect(page).toEqual({ items: log.filter((d) => d.status === 'failed' && d.id < cursor.id), hasMore: false });
  });

  it('the status filter never returns expired rows and still fills the page', async () => {
    // Arrange: 6 failed rows, the 2nd and 3rd newest expired.
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 6, (d, i) =>
      after(d, 'failed', i === 3 || i === 4 ? { expiresAt: NOW_S - 1 } : {}),
    );
    const live = log.filter((d) => d.expiresAt !== NOW_S - 1);

    // Act
    const page = await repo().list(webhookId, { status: 'failed', limit: 3 }, NOW);
    const all = await repo().list(webhookId, { status: 'failed', limit: 4 }, NOW);

    // Assert
    expect(page).toEqual({ items: live.slice(0, 3), hasMore: true });
    expect(all).toEqual({ items: live, hasMore: false });
  });

  it("keeps each attempt's error class and timings, and reads back entries stored without them", async () => {
    // Arrange
    const first = afterClassed(newDelivery(newWebhookId()), 'pending', 'tls_error');
    const row = { ...after(first, 'failed') };
    await repo().createClaimed(row);

    // Act
    const read = await repo().get(row.webhookId, row.id, NOW);

    // Assert
    expect(read).toEqual(row);
    expect(read?.attemptLog[0]).toMatchObject({
      errorClass: 'tls_error',
      timings: { dnsMs: null, connectMs: 3, tlsMs: null, ttfbMs: 12 },
    });
    expect(read?.attemptLog[1]).not.toHaveProperty('errorClass');
    expect(read?.attemptLog[1]).not.toHaveProperty('timings');
  });

  it('reads back exactly every kind of row and attempt entry (however compactly it is stored)', async () => {
    // Arrange: a standard row whose payload names its event; a chat row; a standard row whose payload does not
    // begin with its event (a body written by hand); entries with headers, without class or timings, with
    // empty timings, of each kind; null and set times.
    const webhookId = newWebhookId();
    const standard = newDelivery(webhookId, T0, {
      eventId: 'evt_01standard',
      event: 'email.bounced',
      payload: '{"id":"evt_01standard","type":"email.bounced","data":{"n":"\\"quoted\\""}}',
    });
    const entries = [
      { at: T0, statusCode: null, durationMs: 10_000, error: 'timed out after 10000 ms' },
      {
        at: T0 + 1,
        statusCode: 503,
        durationMs: 7,
        error: 'HTTP 503',
        errorClass: 'http_5xx' as const,
        timings: { dnsMs: null, connectMs: null, tlsMs: null, ttfbMs: null },
        kind: 'manual' as const,
      },
      {
        at: T0 + 2,
        statusCode: 500,
        durationMs: 12,
        error: 'HTTP 500',
        errorClass: 'http_5xx' as const,
        timings: { dnsMs: 1, connectMs: 2, tlsMs: 3, ttfbMs: 4 },
        kind: 'automatic' as const,
        requestHeaders: { 'webhook-id': 'evt_01standard', 'Content-Type': 'application/json' },
        responseHeaders: { 'retry-after': '5' },
        retryAfterSeconds: 5,
      },
    ];
    const rows: Delivery[] = [
      after(standard, 'succeeded', { attemptLog: entries, deliveredAt: T0 + 50 }),
      newDelivery(webhookId, T0 + 1_000, { format: 'discord', payload: '{"content":"Email delivered"}' }),
      newDelivery(webhookId, T0 + 2_000, { eventId: 'evt_other', event: 'email.sent', payload: '{"id":"evt_x"}' }),
      after(newDelivery(webhookId, T0 + 3_000, { format: 'slack' }), 'failed', {
        retriedAt: T0 + 9,
        settledAt: T0 + 8,
      }),
    ];

    // Act
    for (const row of rows) expect(await repo().createClaimed(row)).toBe(true);
    const read = await Promise.all(rows.map((row) => repo().get(webhookId, row.id, NOW)));
    const listed = await repo().list(webhookId, { limit: 10 }, NOW);

    // Assert
    expect(read).toEqual(rows);
    expect(listed.items).toEqual([...rows].reverse());
  });

  it("filters by the latest attempt's error class, newest first, with exact has_more, alone or with a status", async () => {
    // Arrange: latest classes cycle http_5xx (pending), timeout (failed), success, http_5xx (failed); an earlier
    // http_5xx attempt does not count once a later one has another class.
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 8, (d, i) => {
      if (i % 4 === 0) return afterClassed(d, 'pending', 'http_5xx');
      if (i % 4 === 1) return afterClassed(afterClassed(d, 'pending', 'http_5xx'), 'failed', 'timeout');
      if (i % 4 === 2) return afterClassed(d, 'succeeded', null);
      return afterClassed(d, 'failed', 'http_5xx');
    });
    await seedLog(newWebhookId(), 3, (d) => afterClassed(d, 'failed', 'http_5xx'));
    const latestIs = (errorClass: ErrorClass) => log.filter((d) => d.attemptLog.at(-1)?.errorClass === errorClass);

    // Act
    const http5xx = await repo().list(webhookId, { errorClass: 'http_5xx', limit: 10 }, NOW);
    const firstTwo = await repo().list(webhookId, { errorClass: 'http_5xx', limit: 2 }, NOW);
    const rest = await repo().list(
      webhookId,
      { errorClass: 'http_5xx', limit: 10, after: firstTwo.items.at(-1)?.id },
      NOW,
    );
    const timeouts = await repo().list(webhookId, { errorClass: 'timeout', limit: 10 }, NOW);
    const failed5xx = await repo().list(webhookId, { status: 'failed', errorClass: 'http_5xx', limit: 10 }, NOW);
    const pending5xx = await repo().list(webhookId, { status: 'pending', errorClass: 'http_5xx', limit: 10 }, NOW);
    const none = await repo().list(webhookId, { errorClass: 'dns_error', limit: 10 }, NOW);

    // Assert
    expect(http5xx).toEqual({ items: latestIs('http_5xx'), hasMore: false });
    expect(ids(http5xx.items)).toHaveLength(4);
    expect(firstTwo).toEqual({ items: latestIs('http_5xx').slice(0, 2), hasMore: true });
    expect(rest).toEqual({ items: latestIs('http_5xx').slice(2), hasMore: false });
    expect(timeouts).toEqual({ items: latestIs('timeout'), hasMore: false });
    expect(failed5xx).toEqual({ items: latestIs('http_5xx').filter((d) => d.status === 'failed'), hasMore: false });
    expect(pending5xx).toEqual({ items: latestIs('http_5xx').filter((d) => d.status === 'pending'), hasMore: false });
    expect(none).toEqual({ items: [], hasMore: false });
  });

  it('filters by event types and reads from `from` up (a key bound), with `after`, alone or with a status (failed from its index)', async () => {
    // Arrange: rows a second apart; events cycle sent, delivered, bounced; every other row failed.
    const webhookId = newWebhookId();
    const events = ['email.sent', 'email.delivered', 'email.bounced'] as const;
    const log = await seedLog(webhookId, 9, (d, i) =>
      after({ ...d, event: events[i % 3] ?? 'email.sent' }, i % 2 ? 'failed' : 'succeeded'),
    );
    const from = `dlv_${idTime(T0 + 3_000)}`;
    const since = log.filter((d) => d.createdAt >= T0 + 3_000);
    const kept = (types: readonly string[]) => log.filter((d) => types.includes(d.event));

    // Act
    const bounced = await repo().list(webhookId, { eventTypes: ['email.bounced'], limit: 10 }, NOW);
    const two = await repo().list(webhookId, { eventTypes: ['email.sent', 'email.bounced'], limit: 2 }, NOW);
    const fromUp = await repo().list(webhookId, { from, limit: 10 }, NOW);
    const fromPaged = await repo().list(webhookId, { from, limit: 3, after: since[1]?.id }, NOW);
    const belowFrom = await repo().list(webhookId, { from, limit: 3, after: log.at(-1)?.id }, NOW);
    const failedFrom = await repo().list(
      webhookId,
      { status: 'failed', from, eventTypes: ['email.sent', 'email.delivered'], limit: 10 },
      NOW,
    );
    const failedUp = await repo().list(webhookId, { status: 'failed', from, limit: 1 }, NOW);

    // Assert
    expect(bounced).toEqual({ items: kept(['email.bounced']), hasMore: false });
    expect(two).toEqual({ items: kept(['email.sent', 'email.bounced']).slice(0, 2), hasMore: true });
    expect(since).toHaveLength(6);
    expect(fromUp).toEqual({ items: since, hasMore: false });
    expect(fromPaged).toEqual({ items: since.slice(2, 5), hasMore: true });
    expect(belowFrom).toEqual({ items: [], hasMore: false });
    expect(failedFrom).toEqual({
      items: since.filter((d) => d.status === 'failed' && d.event !== 'email.bounced'),
      hasMore: false,
    });
    expect(failedUp).toEqual({ items: since.filter((d) => d.status === 'failed').slice(0, 1), hasMore: true });
  });

  it('never matches a row whose latest attempt was stored without a class (written before classes)', async () => {
    // Arrange
    const webhookId = newWebhookId();
    await seedLog(webhookId, 2, (d) => after(d, 'failed'));

    // Act
    const page = await repo().list(webhookId, { errorClass: 'http_5xx', limit: 10 }, NOW);

    // Assert
    expect(page).toEqual({ items: [], hasMore: false });
  });

  it('a filtered read examines at most `examine` rows: short of a full page, hasMore and resumeAfter (the last row examined)', async () => {
    // Arrange: 300 rows; the 3 oldest failed on a timeout, the next 3 succeeded, the rest pending after an HTTP 5xx.
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 300, (d, i) =>
      i < 3
        ? afterClassed(d, 'failed', 'timeout')
        : i < 6
          ? afterClassed(d, 'succeeded', null)
          : afterClassed(d, 'pending', 'http_5xx'),
    );
    const timeouts = log.slice(-3);
    const succeeded = log.slice(-6, -3);

    // Act
    const byClass = await repo().list(webhookId, { errorClass: 'timeout', limit: 10, examine: 250 }, NOW);
    const byClassRest = await repo().list(
      webhookId,
      { errorClass: 'timeout', limit: 10, examine: 250, after: byClass.resumeAfter ?? '' },
      NOW,
    );
    const byStatus = await repo().list(webhookId, { status: 'succeeded', limit: 10, examine: 250 }, NOW);
    const byStatusRest = await repo().list(
      webhookId,
      { status: 'succeeded', limit: 10, examine: 250, after: byStatus.resumeAfter ?? '' },
      NOW,
    );
    const exactly = await repo().list(webhookId, { errorClass: 'timeout', limit: 10, examine: 300 }, NOW);

    // Assert
    expect(byClass).toEqual({ items: [], hasMore: true, resumeAfter: log[249]?.id });
    expect(byClassRest).toEqual({ items: timeouts, hasMore: false });
    expect(byStatus).toEqual({ items: [], hasMore: true, resumeAfter: log[249]?.id });
    expect(byStatusRest).toEqual({ items: succeeded, hasMore: false });
    // The cap reached on the oldest row: nothing is left, so no more.
    expect(exactly).toEqual({ items: timeouts, hasMore: false });
  });

  it('failed with an error class reads only failed rows (the cap counts them), filtered on the class', async () => {
    // Arrange: 200 succeeded rows newer than 30 failed ones: the 3 oldest failed on a timeout, the others HTTP 5xx.
    const webhookId = newWebhookId();
    const log = await seedLog(webhookId, 230, (d, i) =>
      i < 3
        ? afterClassed(d, 'failed', 'timeout')
        : i < 30
          ? afterClassed(d, 'failed', 'http_5xx')
          : afterClassed(d, 'succeeded', null),
    );
    const failed = log.filter((d) => d.status === 'failed');
    const timeouts = log.slice(-3);

    // Act: 40 rows examined are enough for every failed row, far from enough for the partition.
    const whole = await repo().list(
      webhookId,
      { status: 'failed', errorClass: 'timeout', limit: 10, examine: 40 },
      NOW,
    );
    const capped = await repo().list(
      webhookId,
      { status: 'failed', errorClass: 'timeout', limit: 10, examine: 20 },
      NOW,
    );
    const rest = await repo().list(
      webhookId,
      { status: 'failed', errorClass: 'timeout', limit: 10, examine: 20, after: capped.resumeAfter ?? '' },
      NOW,
    );
    const firstTwo = await repo().list(
      webhookId,
      { status: 'failed', errorClass: 'http_5xx', limit: 2, examine: 40 },
      NOW,
    );

    // Assert
    expect(whole).toEqual({ items: timeouts, hasMore: false });
    expect(capped).toEqual({ items: [], hasMore: true, resumeAfter: failed[19]?.id });
    expect(rest).toEqual({ items: timeouts, hasMore: false });
    expect(firstTwo).toEqual({ items: failed.slice(0, 2), hasMore: true });
  });

  it('moves a row between status filters when its status changes', async () => {
    // Arrange
    const delivery = newDelivery(newWebhookId());
    await repo().createClaimed(delivery);
    const pendingBefore = await repo().list(delivery.webhookId, { status: 'pending', limit: 5 }, NOW);

    // Act
    const succeeded = after(delivery, 'succeeded');
    await repo().record(succeeded, 1);

    // Assert
    expect(ids(pendingBefore.items)).toEqual([delivery.id]);
    expect(await repo().list(delivery.webhookId, { status: 'pending', limit: 5 }, NOW)).toEqual({
      items: [],
      hasMore: false,
    });
    expect(await repo().list(delivery.webhookId, { status: 'succeeded', limit: 5 }, NOW)).toEqual({
      items: [succeeded],
      hasMore: false,
    });
  });

  // --- listDue -------------------------------------------------------------------------------------------

  it('listDue returns only pending rows due at or before dueBefore, oldest due first, across webhooks', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const [a, b] = [newWebhookId(), newWebhookId()];
    const due = (webhookId: string, nextAttemptAt: number, attempts = 1) => {
      const { claim: _unclaimed, ...row } = newDelivery(webhookId, T0, { attempts, nextAttemptAt });
      return row;
    };
    const rows = {
      late: due(a, NOW - 50_000, 2),
      onTime: due(b, NOW, 1),
      earliest: due(b, NOW - 90_000, 3),
      future: due(a, NOW + 1),
      failed: after(newDelivery(a), 'failed'),
      succeeded: after(newDelivery(b), 'succeeded'),
      middle: due(a, NOW - 70_000, 1),
    };
    for (const row of Object.values(rows)) await fresh.createClaimed(row);

    // Act
    const listed = await fresh.listDue(NOW, 100);

    // Assert
    const view = (d: Delivery) => ({
      id: d.id,
      webhookId: d.webhookId,
      attempts: d.attempts,
      nextAttemptAt: d.nextAttemptAt,
    });
    expect(listed).toEqual([rows.earliest, rows.middle, rows.late, rows.onTime].map(view));
  });

  it('listDue honours the limit (the earliest due first) and an all-pending sweep (MAX_SAFE_INTEGER)', async () => {
    // Arrange
    const fresh = await harness.fresh();
    const webhookId = newWebhookId();
    const times = [NOW + 86_400_000, NOW - 5_000, NOW - 1_000, NOW - 9_000, NOW + 3_600_000];
    for (const t of times) await fresh.createClaimed(newDelivery(webhookId, T0, { nextAttemptAt: t, attempts: 1 }));

    // Act
    const firstTwo = await fresh.listDue(NOW, 2);
    const everything = await fresh.listDue(Number.MAX_SAFE_INTEGER, 500);

    // Assert
    expect(firstTwo.map((d) => d.nextAttemptAt)).toEqual([NOW - 9_000, NOW - 5_000]);
    expect(everything.map((d) => d.nextAttemptAt)).toEqual([...times].sort((x, y) => x - y));
  });

  it('listDue pages past `after`: every due row exactly once, rows with the same due time included', async () => {
    // Arrange: seven overdue rows, three of them due at the same millisecond, across two webhooks.
    const fresh = await harness.fresh();
    const [a, b] = [newWebhookId(), newWebhookId()];
    const rows = [NOW - 7_000, NOW - 5_000, NOW - 5_000, NOW - 5_000, NOW - 2_000, NOW - 1_000, NOW].map((t, i) =>
      newDelivery(i % 2 ? a : b, T0 + i, { nextAttemptAt: t, attempts: 1 }),
    );
    for (const row of rows) await fresh.createClaimed(row);

    // Act
    const seen: string[] = [];
    let after: Awaited<ReturnType<typeof fresh.listDue>>[number] | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await fresh.listDue(NOW, 3, after);
      seen.push(...page.map((d) => d.id));
      if (page.length < 3) break;
      after = page.at(-1);
    }

    // Assert
    expect(seen.sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it('listDue never skips a row of a large tie group (many rows of one webhook due at the same millisecond)', async () => {
    // Arrange: 16 rows of each of two webhooks, all due at once: several per shard, in the index's tie order.
    const fresh = await harness.fresh();
    const rows = [newWebhookId(), newWebhookId()].flatMap((webhookId, w) =>
      Array.from({ length: 16 }, (_, i) =>
        newDelivery(webhookId, T0 + w * 100 + i, { nextAttemptAt: NOW - 1_000, attempts: 1 }),
      ),
    );
    for (const row of rows) await fresh.createClaimed(row);

    // Act: pages of 2
    const seen: string[] = [];
    let after: Awaited<ReturnType<typeof fresh.listDue>>[number] | undefined;
    for (let pages = 0; pages < 40; pages++) {
      const page = await fresh.listDue(NOW, 2, after);
      seen.push(...page.map((d) => d.id));
      if (page.length < 2) break;
      after = page.at(-1);
    }

    // Assert
    expect(seen.sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it('a first attempt in flight is in no due list (the queue keeps its job); its retry enters it, a final row leaves it', async () => {
    // Arrange: two rows as createClaimed writes a first attempt (pending, attempts 0, due at creation).
    const fresh = await harness.fresh();
    const webhookId = newWebhookId();
    const rescheduled = newDelivery(webhookId, T0);
    const finished = newDelivery(webhookId, T0 + 1);
    await fresh.createClaimed(rescheduled);
    await fresh.createClaimed(finished);
    const inFlight = await fresh.listDue(Number.MAX_SAFE_INTEGER, 10);

    // Act: the first failed with a retry due later; the second failed for good after a retry was due.
    const retrying = after(rescheduled, 'pending', { nextAttemptAt: NOW + 300_000 });
    await fresh.record(retrying, 1);
    const failing = after(finished, 'pending', { nextAttemptAt: NOW - 1_000 });
    await fresh.record(failing, 1);
    const bothDue = await fresh.listDue(NOW + 300_000, 10);
    const claimed = await fresh.claim(
      webhookId,
      finished.id,
      { attemptsBefore: 1, statuses: ['pending'], nowMs: NOW },
      {
        attempt: 2,
        until: NOW + 30_000,
      },
    );
    await fresh.record(after(claimed ?? failing, 'failed'), 2);

    // Assert
    expect(inFlight).toEqual([]);
    expect(ids(bothDue)).toEqual([finished.id, rescheduled.id]);
    expect(await fresh.listDue(NOW, 10)).toEqual([]);
    expect(await fresh.listDue(NOW + 300_000, 10)).toEqual([
      { id: rescheduled.id, webhookId, attempts: 1, nextAttemptAt: NOW + 300_000 },
    ]);
  });

  it('a held first attempt (per-email ordering: waitingFor, no attempt) is due at its recheck time; released, it leaves', async () => {
    // Arrange: created with its email and sequence, then stored held under its first claim.
    const fresh = await harness.fresh();
    const webhookId = newWebhookId();
    const row = newDelivery(webhookId, T0, { emailId: 'email_contract', sequence: 14_405 });
    await fresh.createClaimed(row);
    const { claim: _released, ...unclaimed } = row;
    const held: Delivery = { ...unclaimed, waitingFor: 643, nextAttemptAt: NOW + 60_000 };

    // Act
    const stored = await fresh.record(held, 1);
    const readBack = await fresh.get(webhookId, row.id, NOW);
    const due = await fresh.listDue(NOW + 60_000, 10);
    const notYet = await fresh.listDue(NOW, 10);
    const claimed = await fresh.claim(
      webhookId,
      row.id,
      { attemptsBefore: 0, statuses: ['pending'], nowMs: NOW },
      { attempt: 1, until: NOW + 30_000 },
    );
    const { waitingFor: _gone, ...released } = claimed ?? held;
    await fresh.record({ ...released, ...after(released as Delivery, 'succeeded'), emailId: 'email_contract' }, 1);

    // Assert
    expect(stored).toBe(true);
    expect(readBack).toEqual(held);
    expect(due).toEqual([{ id: row.id, webhookId, attempts: 0, nextAttemptAt: NOW + 60_000 }]);
    expect(notYet).toEqual([]);
    expect(claimed).toMatchObject({ attempts: 0, waitingFor: 643, claim: { attempt: 1 } });
    expect(await fresh.listDue(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    expect(await fresh.get(webhookId, row.id, NOW)).toMatchObject({ status: 'succeeded', sequence: 14_405 });
  });

  it('listDue is empty when nothing is pending', async () => {
    // Arrange
    const fresh = await harness.fresh();
    await fresh.createClaimed(after(newDelivery(newWebhookId()), 'succeeded'));

    // Act / Assert
    expect(await fresh.listDue(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  // --- DynamoDB layout -----------------------------------------------------------------------------------

  if (harness.raw) {
    const raw = harness.raw;

    /** The entries of one of the deliveries table's indexes (every page), as stored. */
    async function entries(index: string, key: string, value: string) {
      const { db, table } = raw();
      const { Items } = await db.doc.send(
        new QueryCommand({
          TableName: table,
          IndexName: index,
          KeyConditionExpression: '#k = :v',
          ExpressionAttributeNames: { '#k': key },
          ExpressionAttributeValues: { ':v': value },
        }),
      );
      return Items ?? [];
    }
    /** The stored item of a delivery, in its shard's partition (`webhookId#n`). */
    const read = async (webhookId: string, id: string) => {
      const { db, table } = raw();
      return (
        await db.doc.send(new GetCommand({ TableName: table, Key: { webhookId: shardKeyOf(webhookId, id), id } }))
      ).Item;
    };
    /** The stored item under the legacy partition key (the unsuffixed webhook id, rows written before the shards). */
    const readLegacy = async (webhookId: string, id: string) => {
      const { db, table } = raw();
      return (await db.doc.send(new GetCommand({ TableName: table, Key: { webhookId, id } }))).Item;
    };
    /** A row as the single-partition layout wrote it: under the unsuffixed webhook id. */
    const putLegacy = async (row: Delivery, extra: Record<string, unknown> = {}) => {
      const { db, table } = raw();
      await db.doc.send(new PutCommand({ TableName: table, Item: { ...row, ...extra } }));
    };

    it('a first attempt in flight is in no index: its creation is one table write', async () => {
      // Arrange
      const webhookId = newWebhookId();
      const first = newDelivery(webhookId, T0);

      // Act
      await repo().createClaimed(first);

      // Assert
      const item = await read(webhookId, first.id);
      for (const attribute of ['statusKey', 'dueShard', 'dueAt']) expect(item).not.toHaveProperty(attribute);
    });

    it('keeps a pending retry in byDueShard only, keys and attempts, by zero-padded due time', async () => {
      // Arrange
      const webhookId = newWebhookId();
      const pending = newDelivery(webhookId, T0, { attempts: 1 });

      // Act
      await repo().createClaimed(pending);

      // Assert: in no status index; its byDueShard entry is the keys (its shard's) and `attempts`, never the payload.
      const item = await read(webhookId, pending.id);
      expect(item).toMatchObject({ dueShard: expect.stringMatching(/^due#\d+$/), dueAt: String(T0).padStart(15, '0') });
      expect(item).not.toHaveProperty('statusKey');
      const [entry, ...others] = (await entries('byDueShard', 'dueShard', item?.dueShard)).filter((e) =>
        String(e.webhookId).startsWith(`${webhookId}#`),
      );
      expect(others).toEqual([]);
      expect(entry).toEqual({
        webhookId: shardKeyOf(webhookId, pending.id),
        id: pending.id,
        dueShard: item?.dueShard,
        dueAt: String(T0).padStart(15, '0'),
        attempts: 1,
      });
    });

    it('a succeeded row is in no index; a failed row is in byStatusKey only, keys and expiry', async () => {
      // Arrange
      const webhookId = newWebhookId();
      const [ok, bad] = [newDelivery(webhookId, T0), newDelivery(webhookId, T0 + 1)];
      await repo().createClaimed(ok);
      await repo().createClaimed(bad);

      // Act
      await repo().record(after(ok, 'succeeded'), 1);
      await repo().record(after(bad, 'failed'), 1);

      // Assert
      const okItem = await read(webhookId, ok.id);
      const badItem = await read(webhookId, bad.id);
      for (const attribute of ['statusKey', 'dueShard', 'dueAt']) expect(okItem).not.toHaveProperty(attribute);
      expect(badItem).not.toHaveProperty('dueShard');
      expect(badItem).toMatchObject({ statusKey: `${webhookId}#failed` });
      expect(await entries('byStatusKey', 'statusKey', `${webhookId}#failed`)).toEqual([
        {
          webhookId: shardKeyOf(webhookId, bad.id),
          id: bad.id,
          statusKey: `${webhookId}#failed`,
          expiresAt: NOW_S + 30 * 86_400,
        },
      ]);
    });

    it("spreads pending rows over byDueShard's key values: across webhooks, and one webhook's over several", async () => {
      // Arrange
      const many = Array.from({ length: 48 }, () => newDelivery(newWebhookId(), T0, { attempts: 1 }));
      const busy = newWebhookId();
      const ofBusy = Array.from({ length: 24 }, (_, i) => newDelivery(busy, T0 + i, { attempts: 1 }));

      // Act
      for (const row of [...many, ...ofBusy]) await repo().createClaimed(row);

      // Assert
      const shards = async (rows: Delivery[]) =>
        new Set(await Promise.all(rows.map(async (row) => (await read(row.webhookId, row.id))?.dueShard)));
      expect((await shards(many)).size).toBeGreaterThanOrEqual(10);
      expect((await shards(ofBusy)).size).toBeGreaterThan(1);
      expect((await repo().list(busy, { status: 'pending', limit: 100 }, NOW)).items).toHaveLength(24);
    });

    it('stores a delivered standard row compactly: what its payload says, nulls and the standard format left out, the log one string, the payload deflated', async () => {
      // Arrange: a first attempt that succeeded, as the worker records it.
      const webhookId = newWebhookId();
      const payload = JSON.stringify({
        id: 'evt_01compact',
        type: 'email.delivered',
        email_id: 'em_01m8b0d4pxyz0t1v7kq6s2w9yz',
        to: 'customer123@example.com',
        timestamp: '2026-11-26T02:36:39.123Z',
        data: { from: 'Acme <billing@acme.example>', subject: 'Your receipt #100123' },
      });
      const first = newDelivery(webhookId, T0, { eventId: 'evt_01compact', event: 'email.delivered', payload });
      await repo().createClaimed(first);
      const delivered = afterClassed(first, 'succeeded', null);

      // Act
      await repo().record(delivered, 1);

      // Assert
      const item = await read(webhookId, first.id);
      for (const attribute of ['eventId', 'event', 'format', 'nextAttemptAt', 'attemptLog', 'payload']) {
        expect(item).not.toHaveProperty(attribute);
      }
      expect(typeof item?.log).toBe('string');
      expect(item?.payloadZ1).toBeInstanceOf(Uint8Array);
      expect((item?.payloadZ1 as Uint8Array | undefined)?.length).toBeLessThan(Buffer.byteLength(payload) * 0.6);
      expect(await repo().get(webhookId, first.id, NOW)).toEqual(delivered);
    });

    it('reads a row stored in the full form (every attribute, the log a list) exactly', async () => {
      // Arrange: the item as the layout before the compact one wrote it, in its shard.
      const { db, table } = raw();
      const webhookId = newWebhookId();
      const row = afterClassed(newDelivery(webhookId, T0), 'failed', 'http_5xx');
      await db.doc.send(
        new PutCommand({
          TableName: table,
          Item: { ...row, webhookId: shardKeyOf(webhookId, row.id), statusKey: `${webhookId}#failed` },
        }),
      );

      // Act / Assert
      expect(await repo().get(webhookId, row.id, NOW)).toEqual(row);
      expect((await repo().list(webhookId, { status: 'failed', limit: 5 }, NOW)).items).toEqual([row]);
    });

    it("lists a webhook's pending rows from its own partitions, never from the index other webhooks share", async () => {
      // Arrange: other webhooks' pending rows fill the shared byDueShard key values.
      const { db } = raw();
      const webhookId = newWebhookId();
      const mine = newDelivery(webhookId, T0);
      await repo().createClaimed(mine);
      for (let i = 0; i < 20; i++) await repo().createClaimed(newDelivery(newWebhookId(), T0));
      const queried: string[] = [];
      db.doc.middlewareStack.add(
        (next) => async (args) => {
          const input = args.input as {
            KeyConditionExpression?: string;
            IndexName?: string;
            ExpressionAttributeValues?: Record<string, unknown>;
          };
          if (input.KeyConditionExpression) {
            queried.push(`${input.IndexName ?? 'table'} ${String(input.ExpressionAttributeValues?.[':p'])}`);
          }
          return next(args);
        },
        { step: 'initialize', name: 'recordQueries' },
      );

      // Act
      let listed: Awaited<ReturnType<ReturnType<typeof repo>['list']>>;
      try {
        listed = await repo().list(webhookId, { status: 'pending', limit: 10 }, NOW);
      } finally {
        db.doc.middlewareStack.remove('recordQueries');
      }

      // Assert
      expect(listed.items.map((row) => row.id)).toEqual([mine.id]);
      expect(queried.sort()).toEqual(
        [...Array.from({ length: DELIVERY_SHARDS }, (_, n) => `table ${webhookId}#${n}`), `table ${webhookId}`].sort(),
      );
    });

    it("spreads one webhook's rows over DELIVERY_SHARDS partition keys `webhookId#n`, n from the id; reads give the webhook id", async () => {
      // Arrange
      const webhookId = newWebhookId();
      const log = await seedLog(webhookId, 64);

      // Act
      const stored = await Promise.all(log.map(async (row) => (await read(webhookId, row.id))?.webhookId));
      const listed = await repo().list(webhookId, { limit: 100 }, NOW);

      // Assert: each row in `webhookId#n`, n its id's hash (64 rows over most of the 16), none in the unsuffixed
      // partition; the API sees one log.
      expect(stored).toEqual(log.map((row) => `${webhookId}#${shardOf(row.id, DELIVERY_SHARDS)}`));
      expect(new Set(stored).size).toBeGreaterThanOrEqual(DELIVERY_SHARDS - 4);
      expect(await readLegacy(webhookId, log[0]?.id ?? '')).toBeUndefined();
      expect(listed).toEqual({ items: log, hasMore: false });
      expect(await repo().get(webhookId, log[5]?.id ?? '', NOW)).toEqual(log[5]);
    });

    it('reads rows written before the shards (unsuffixed partition) among the sharded ones: get, getMany, list, cursors, filters, range', async () => {
      // Arrange: 12 rows a second apart, every third one written by the single-partition layout; a recovery job
      // in the unsuffixed partition too (it is never a delivery).
      const webhookId = newWebhookId();
      const rows = Array.from({ length: 12 }, (_, i) => {
        const row = newDelivery(webhookId, T0 + i * 1_000);
        return i % 2 ? after(row, 'succeeded') : after(row, 'failed');
      });
      const legacy = rows.filter((_, i) => i % 3 === 0);
      for (const [i, row] of rows.entries()) {
        if (i % 3 === 0) await putLegacy(row, row.status === 'failed' ? { statusKey: `${webhookId}#failed` } : {});
        else expect(await repo().createClaimed(row)).toBe(true);
      }
      await putLegacy(newDelivery(webhookId, T0), { id: `rec_${'0'.repeat(26)}` });
      const newest = [...rows].reverse();

      // Act
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await repo().list(webhookId, { limit: 5, ...(cursor ? { after: cursor } : {}) }, NOW);
        pages.push(ids(page.items));
        cursor = page.hasMore ? page.items.at(-1)?.id : undefined;
      } while (cursor);
      const failed = await repo().list(webhookId, { status: 'failed', limit: 100 }, NOW);
      const succeeded = await repo().list(webhookId, { status: 'succeeded', limit: 100 }, NOW);
      const many = await repo().getMany(
        rows.map(({ webhookId: w, id }) => ({ webhookId: w, id })),
        NOW,
      );
      const window = await repo().range(
        webhookId,
        { from: rows[0]?.id ?? '', to: rows[11]?.id ?? '', onlyFailed: false, limit: 100 },
        NOW,
      );

      // Assert
      expect(pages).toEqual([ids(newest.slice(0, 5)), ids(newest.slice(5, 10)), ids(newest.slice(10))]);
      expect(failed.items).toEqual(newest.filter((row) => row.status === 'failed'));
      expect(succeeded.items).toEqual(newest.filter((row) => row.status === 'succeeded'));
      expect(many).toEqual(rows);
      expect(window).toEqual({ ids: ids(rows), next: null });
      expect(await repo().get(webhookId, legacy[1]?.id ?? '', NOW)).toEqual(legacy[1]);
    });

    it('claims and records a row written before the shards where it is (it never moves, and no copy appears)', async () => {
      // Arrange: a pending retry in the unsuffixed partition.
      const webhookId = newWebhookId();
      const { claim: _claim, ...old } = after(newDelivery(webhookId, T0), 'pending', { nextAttemptAt: NOW - 1_000 });
      await putLegacy(old);

      // Act
      const claimed = await repo().claim(
        webhookId,
        old.id,
        { attemptsBefore: 1, statuses: ['pending'], nowMs: NOW },
        { attempt: 2, until: NOW + 30_000 },
      );
      const recorded = await repo().record(after(claimed ?? old, 'succeeded'), 2);

      // Assert
      expect(claimed).toMatchObject({ id: old.id, webhookId, claim: { attempt: 2 } });
      expect(recorded).toBe(true);
      expect(await readLegacy(webhookId, old.id)).toMatchObject({ webhookId, status: 'succeeded', attempts: 2 });
      expect(await read(webhookId, old.id)).toBeUndefined();
      expect(await repo().record(after(claimed ?? old, 'failed'), 2)).toBe(false);
    });

    it('still finds a pending row stored before the shards (dueShard "due"): due list and status filter', async () => {
      // Arrange: the item as the single-key layout wrote it, due at 5 ms after the epoch (before any other row).
      const { db, table } = raw();
      const webhookId = newWebhookId();
      const { claim: _claim, ...old } = newDelivery(webhookId, T0, { attempts: 1, nextAttemptAt: 5 });
      await db.doc.send(
        new PutCommand({
          TableName: table,
          Item: { ...old, statusKey: `${webhookId}#pending`, dueShard: 'due', dueAt: '000000000000005' },
        }),
      );

      // Act
      const due = await repo().listDue(10, 10);
      const listed = await repo().list(webhookId, { status: 'pending', limit: 10 }, NOW);

      // Assert
      expect(due).toEqual([{ id: old.id, webhookId, attempts: 1, nextAttemptAt: 5 }]);
      expect(listed).toEqual({ items: [old], hasMore: false });
    });

    // Expand/contract (lambdas/domain/stored-formats.ts): with a format's switch off, rows are written as the
    // release before it wrote them, so a stage can still roll back past its reader.
    it('with deliveryShards off, writes new rows in the unsuffixed partition (the layout before the shards); reads, claims, records and lists them', async () => {
      // Arrange
      const { db, table } = raw();
      const unsharded = new DynamoDeliveryRepository(db.doc, table, { deliveryShards: false, deliveryPayloadZ1: true });
      const webhookId = newWebhookId();
      const row = newDelivery(webhookId, T0);

      // Act
      expect(await unsharded.createClaimed(row)).toBe(true);
      const retry = after(row, 'pending', { nextAttemptAt: NOW - 1_000 });
      expect(await unsharded.record(retry, 1)).toBe(true);
      const pendingItem = await readLegacy(webhookId, row.id);
      const claimed = await repo().claim(
        webhookId,
        row.id,
        { attemptsBefore: 1, statuses: ['pending'], nowMs: NOW },
        { attempt: 2, until: NOW + 30_000 },
      );
      const done = after(claimed ?? retry, 'succeeded');
      expect(await repo().record(done, 2)).toBe(true);

      // Assert: in the partition the release before the shards reads, never in a shard; the default repository
      // (shards on) serves it whole.
      expect(await readLegacy(webhookId, row.id)).toMatchObject({ webhookId, status: 'succeeded', attempts: 2 });
      expect(await read(webhookId, row.id)).toBeUndefined();
      expect(pendingItem).toMatchObject({ webhookId, status: 'pending', dueAt: expect.any(String) });
      expect(await repo().get(webhookId, row.id, NOW)).toEqual(done);
      expect((await unsharded.list(webhookId, { limit: 10 }, NOW)).items).toEqual([done]);
      expect(await unsharded.createClaimed(row)).toBe(false);
    });

    it('with deliveryPayloadZ1 off, stores the payload as the string (no payloadZ1); rows of both forms read the same', async () => {
      // Arrange: a payload long enough that deflating it would pay.
      const { db, table } = raw();
      const plain = new DynamoDeliveryRepository(db.doc, table, { deliveryShards: true, deliveryPayloadZ1: false });
      const webhookId = newWebhookId();
      const payload = JSON.stringify({ type: 'email.delivered', data: { subject: 'Your receipt '.repeat(20) } });
      const row = newDelivery(webhookId, T0, { payload });

      // Act
      await plain.createClaimed(row);
      const delivered = after(row, 'succeeded');
      await plain.record(delivered, 1);

      // Assert
      const item = await read(webhookId, row.id);
      expect(item?.payload).toBe(payload);
      expect(item).not.toHaveProperty('payloadZ1');
      expect(await repo().get(webhookId, row.id, NOW)).toEqual(delivered);
      expect(await plain.get(webhookId, row.id, NOW)).toEqual(delivered);
    });
  }
}
