// Contract suite for the SessionStore port (dashboard sign-in links and sessions), run against DynamoSessionStore
// (dynalite, DynamoDB Local) and InMemorySessionStore: a link is redeemed once and never after its expiry; a
// session is found until it expires, switches mode, and is gone once deleted; a link is never a session.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { SessionRecord, SessionStore, SignInRecord } from '../../../lambdas/app/dashboard/ports';
import type { RepositoryHarness } from './harness';

const T0 = Date.UTC(2026, 10, 25, 19, 0, 0);
const sec = (ms: number) => Math.floor(ms / 1000);
const hash = () => randomBytes(32).toString('hex');

const link = (overrides: Partial<SignInRecord> = {}): SignInRecord => ({
  kind: 'sign-in',
  hash: hash(),
  accountId: 'acct_contract',
  mode: 'test',
  expiresAt: sec(T0 + 15 * 60_000),
  ...overrides,
});
const session = (overrides: Partial<SessionRecord> = {}): SessionRecord => ({
  kind: 'session',
  hash: hash(),
  accountId: 'acct_contract',
  mode: 'live',
  csrf: randomBytes(32).toString('base64url'),
  expiresAt: sec(T0 + 12 * 3_600_000),
  ...overrides,
});

export function sessionStoreContract(harness: RepositoryHarness<SessionStore>): void {
  const store = () => harness.shared();

  it('redeems a sign-in link once: the second redemption finds nothing', async () => {
    // Arrange
    const record = link();
    await store().putSignIn(record);

    // Act
    const first = await store().redeemSignIn(record.hash, T0 + 1_000);
    const second = await store().redeemSignIn(record.hash, T0 + 2_000);

    // Assert
    expect(first).toEqual(record);
    expect(second).toBeNull();
  });

  it('shows a link without using it, until it is used or expires; a session is no link', async () => {
    const record = link();
    const other = session();
    await store().putSignIn(record);
    await store().putSession(other);

    expect(await store().peekSignIn(record.hash, T0 + 1_000)).toEqual(record);
    expect(await store().peekSignIn(record.hash, T0 + 1_000)).toEqual(record);
    expect(await store().peekSignIn(record.hash, T0 + 16 * 60_000)).toBeNull();
    expect(await store().peekSignIn(other.hash, T0)).toBeNull();
    expect(await store().redeemSignIn(record.hash, T0 + 2_000)).toEqual(record);
    expect(await store().peekSignIn(record.hash, T0 + 3_000)).toBeNull();
  });

  it("revokes every session and unused link of one account, and no other account's", async () => {
    const store_ = await harness.fresh();
    const mine = [session({ accountId: 'acct_revoked' }), session({ accountId: 'acct_revoked', mode: 'test' })];
    const myLink = link({ accountId: 'acct_revoked' });
    const theirs = session({ accountId: 'acct_kept' });
    for (const record of [...mine, theirs]) await store_.putSession(record);
    await store_.putSignIn(myLink);

    expect(await store_.revokeAccount('acct_revoked')).toBe(3);

    for (const record of mine) expect(await store_.getSession(record.hash, T0)).toBeNull();
    expect(await store_.peekSignIn(myLink.hash, T0)).toBeNull();
    expect(await store_.getSession(theirs.hash, T0)).toEqual(theirs);
  });

  it("keeps when an account signed out everywhere, per account, for a session's lifetime; never as a session", async () => {
    const store_ = await harness.fresh();
    expect(await store_.signedOutEverywhereAt('acct_everywhere', T0)).toBeNull();

    await store_.signOutEverywhere('acct_everywhere', T0, sec(T0 + 12 * 3_600_000));
    await store_.signOutEverywhere('acct_everywhere', T0 + 5_000, sec(T0 + 5_000 + 12 * 3_600_000));

    expect(await store_.signedOutEverywhereAt('acct_everywhere', T0 + 6_000)).toBe(T0 + 5_000);
    expect(await store_.signedOutEverywhereAt('acct_other', T0 + 6_000)).toBeNull();
    // Once every session it could end has expired, the mark is gone too (TTL).
    expect(await store_.signedOutEverywhereAt('acct_everywhere', T0 + 5_000 + 12 * 3_600_000)).toBeNull();
  });

  it('lets exactly one of two concurrent redemptions win', async () => {
    const record = link();
    await store().putSignIn(record);

    const results = await Promise.all([
      store().redeemSignIn(record.hash, T0 + 1_000),
      store().redeemSignIn(record.hash, T0 + 1_000),
    ]);

    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('refuses an expired link, and an unknown one', async () => {
    const record = link({ expiresAt: sec(T0 + 60_000) });
    await store().putSignIn(record);

    const late = await store().redeemSignIn(record.hash, T0 + 60_000);
    const unknown = await store().redeemSignIn(hash(), T0);

    expect(late).toBeNull();
    expect(unknown).toBeNull();
  });

  it('finds a session until it expires, never a sign-in link as a session, nor a session as a link', async () => {
    const record = session({ expiresAt: sec(T0 + 3_600_000) });
    const pending = link();
    await store().putSession(record);
    await store().putSignIn(pending);

    expect(await store().getSession(record.hash, T0)).toEqual(record);
    expect(await store().getSession(record.hash, T0 + 3_600_000)).toBeNull();
    expect(await store().getSession(pending.hash, T0)).toBeNull();
    expect(await store().redeemSignIn(record.hash, T0)).toBeNull();
  });

  it('switches a session between modes, and not an expired or deleted one', async () => {
    const record = session({ mode: 'live' });
    await store().putSession(record);

    const switched = await store().setMode(record.hash, 'test', T0);
    const stored = await store().getSession(record.hash, T0);
    await store().deleteSession(record.hash);
    const afterDelete = await store().setMode(record.hash, 'live', T0);

    expect(switched).toEqual({ ...record, mode: 'test' });
    expect(stored?.mode).toBe('test');
    expect(afterDelete).toBeNull();
    expect(await store().getSession(record.hash, T0)).toBeNull();
  });

  it('refuses to overwrite an existing session', async () => {
    const record = session();
    await store().putSession(record);

    await expect(store().putSession({ ...record, accountId: 'acct_other' })).rejects.toThrow();
    expect((await store().getSession(record.hash, T0))?.accountId).toBe('acct_contract');
  });
}
