// Dashboard sign-in and sessions (lambdas/app/dashboard): a link works once and for 15 minutes, is stored only
// as a hash; a session lasts 12 hours, stands in for a key of its account and mode with every scope and the
// account's current plan; the CSRF token must match; sign-out ends it.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  checkCsrf,
  currentSession,
  signOut,
  signOutEverywhere,
  switchMode,
} from '../../lambdas/app/dashboard/sessions';
import { createSignInLink, redeemSignIn } from '../../lambdas/app/dashboard/sign-in';
import { hashToken, SESSION_TTL_MS, SIGN_IN_TTL_MS } from '../../lambdas/domain/dashboard/session';
import { NotFoundError } from '../../lambdas/domain/errors';
import { SCOPES } from '../../lambdas/domain/scopes';
import { FakeClock, InMemoryAccountRepository, InMemorySessionStore, seededRandom } from '../support/fakes';

const BASE = 'https://api.sendflow.test/v1';
let deps: {
  sessions: InMemorySessionStore;
  accounts: InMemoryAccountRepository;
  clock: FakeClock;
  random: ReturnType<typeof seededRandom>;
};

beforeEach(async () => {
  deps = {
    sessions: new InMemorySessionStore(),
    accounts: new InMemoryAccountRepository(),
    clock: new FakeClock(),
    random: seededRandom(),
  };
  await deps.accounts.create({ id: 'acct_1', plan: 'starter', createdAt: '2025-01-01T00:00:00.000Z' });
});

const tokenOf = (url: string) => new URL(url).searchParams.get('token') ?? '';

describe('createSignInLink', () => {
  it('makes a link below the dashboard with a 32-byte token, stored only as its SHA-256 hash', async () => {
    // Act
    const link = await createSignInLink(deps, { accountId: 'acct_1', mode: 'live', baseUrl: `${BASE}/` });

    // Assert
    expect(link.url).toMatch(/^https:\/\/api\.sendflow\.test\/v1\/dashboard\/sign-in\?token=[A-Za-z0-9_-]{43}$/);
    const token = tokenOf(link.url);
    expect([...deps.sessions.items.keys()]).toEqual([hashToken(token)]);
    expect(JSON.stringify([...deps.sessions.items.values()])).not.toContain(token);
    expect(Date.parse(link.expiresAt)).toBe(deps.clock.now() + SIGN_IN_TTL_MS);
  });

  it('refuses an unknown account', async () => {
    await expect(createSignInLink(deps, { accountId: 'acct_nope', mode: 'test', baseUrl: BASE })).rejects.toThrow(
      NotFoundError,
    );
  });
});

describe('redeemSignIn', () => {
  it('turns the link into a 12-hour session once; the second use finds nothing', async () => {
    const token = tokenOf((await createSignInLink(deps, { accountId: 'acct_1', mode: 'test', baseUrl: BASE })).url);

    const first = await redeemSignIn(deps, token);
    const second = await redeemSignIn(deps, token);

    expect(first?.session).toMatchObject({ accountId: 'acct_1', mode: 'test' });
    expect(first?.session.expiresAt).toBe(Math.floor((deps.clock.now() + SESSION_TTL_MS) / 1000));
    expect(first?.session.hash).toBe(hashToken(first?.token ?? ''));
    expect(second).toBeNull();
  });

  it('refuses a link after its 15 minutes, and a malformed token without reading storage', async () => {
    const token = tokenOf((await createSignInLink(deps, { accountId: 'acct_1', mode: 'test', baseUrl: BASE })).url);
    deps.clock.advance(SIGN_IN_TTL_MS);

    expect(await redeemSignIn(deps, token)).toBeNull();
    expect(await redeemSignIn(deps, 'short')).toBeNull();
    expect(await redeemSignIn(deps, undefined)).toBeNull();
  });
});

describe('currentSession', () => {
  async function signedIn() {
    const token = tokenOf((await createSignInLink(deps, { accountId: 'acct_1', mode: 'live', baseUrl: BASE })).url);
    const redeemed = await redeemSignIn(deps, token);
    if (!redeemed) throw new Error('no session');
    return redeemed;
  }

  it('stands in for a key of the account and mode: every scope, the current plan, a session key id', async () => {
    const { token } = await signedIn();
    await deps.accounts.update('acct_1', { plan: 'growth' });

    const found = await currentSession(deps, token);

    expect(found?.principal).toEqual({
      accountId: 'acct_1',
      mode: 'live',
      scopes: [...SCOPES],
      plan: 'growth',
      keyId: expect.stringMatching(/^session:[0-9a-f]{16}$/),
    });
  });

  it('ends after 12 hours', async () => {
    const { token } = await signedIn();
    deps.clock.advance(SESSION_TTL_MS - 1_000);
    expect(await currentSession(deps, token)).not.toBeNull();
    deps.clock.advance(1_000);
    expect(await currentSession(deps, token)).toBeNull();
  });

  it('is never found by a sign-in link token, nor by a missing cookie', async () => {
    const link = tokenOf((await createSignInLink(deps, { accountId: 'acct_1', mode: 'live', baseUrl: BASE })).url);
    expect(await currentSession(deps, link)).toBeNull();
    expect(await currentSession(deps, undefined)).toBeNull();
  });

  it('switches mode and ends at sign-out', async () => {
    const { token, session } = await signedIn();

    await switchMode(deps, session, 'test');
    const switched = await currentSession(deps, token);
    await signOut(deps, session);

    expect(switched?.principal.mode).toBe('test');
    expect(await currentSession(deps, token)).toBeNull();
  });
});

describe('signOutEverywhere', () => {
  const signInAs = async (accountId: string, mode: 'live' | 'test' = 'live') => {
    const token = tokenOf((await createSignInLink(deps, { accountId, mode, baseUrl: BASE })).url);
    const redeemed = await redeemSignIn(deps, token);
    if (!redeemed) throw new Error('no session');
    return redeemed;
  };

  it("ends every session of the account, in both modes, and no other account's; a later sign-in works", async () => {
    await deps.accounts.create({ id: 'acct_2', plan: 'starter', createdAt: '2025-01-01T00:00:00.000Z' });
    const here = await signInAs('acct_1');
    const laptop = await signInAs('acct_1', 'test');
    const other = await signInAs('acct_2');
    deps.clock.advance(60_000);

    await signOutEverywhere(deps, here.session);

    expect(await currentSession(deps, here.token)).toBeNull();
    expect(await currentSession(deps, laptop.token)).toBeNull();
    expect((await currentSession(deps, other.token))?.principal.accountId).toBe('acct_2');
    deps.clock.advance(2_000);
    const later = await signInAs('acct_1');
    expect((await currentSession(deps, later.token))?.principal.accountId).toBe('acct_1');
  });
});

describe('checkCsrf', () => {
  it("accepts only the session's own token", async () => {
    const token = tokenOf((await createSignInLink(deps, { accountId: 'acct_1', mode: 'live', baseUrl: BASE })).url);
    const redeemed = await redeemSignIn(deps, token);
    const session = redeemed?.session;
    if (!session) throw new Error('no session');

    expect(checkCsrf(session, session.csrf)).toBe(true);
    expect(checkCsrf(session, undefined)).toBe(false);
    expect(checkCsrf(session, '')).toBe(false);
    expect(checkCsrf(session, `${session.csrf.slice(0, -1)}x`)).toBe(false);
  });
});
