// Unit tests of the sending-domain use cases (lambdas/app/domains/domains.ts) on in-memory fakes with a fake
// clock: create (pending, the provider's DNS records, domain.created; 409 domain_exists on a duplicate), verify
// (domain.updated only when the state changes, once, also when racing the reconciler), checkPendingDomains,
// delete (provider.remove, domain.deleted; 404 after), and isVerifiedSender for live-mode sends. Name claims
// are live-mode only; an identity Sendflow did not create for the account (SES through aws-sdk-client-mock) is
// 409 domain_unavailable with nothing stored, and is never deleted.
import {
  AlreadyExistsException,
  CreateEmailIdentityCommand,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { identityTags, SesDomainProvider } from '../../lambdas/adapters/ses/ses-domains';
import {
  checkPendingDomains,
  createDomain,
  type DomainDeps,
  deleteDomain,
  domainId,
  getDomain,
  isVerifiedSender,
  updateDomainTracking,
  verifyDomain,
} from '../../lambdas/app/domains/domains';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { ConflictError, NotFoundError } from '../../lambdas/domain/errors';
import { derivedId } from '../../lambdas/domain/resources';
import {
  FakeClock,
  InMemoryDomainRepository,
  RecordingEventPublisher,
  ScriptedDomainProvider,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const LIVE: Tenant = { accountId: 'acct_domains', mode: 'live' };
const TEST: Tenant = { accountId: 'acct_domains', mode: 'test' };

function setup() {
  const clock = new FakeClock(T0);
  const domains = new InMemoryDomainRepository();
  const domainProvider = new ScriptedDomainProvider();
  const events = new RecordingEventPublisher();
  const deps: DomainDeps = {
    domains,
    domainProviderFor: () => domainProvider,
    events,
    clock,
    random: seededRandom('domains'),
  };
  const published = () => events.published.flatMap((p) => p.events);
  return { clock, domains, domainProvider, events, deps, published };
}

describe('domains', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(() => {
    s = setup();
  });

  describe('createDomain', () => {
    it('registers the name, stores it pending with the provider’s records, and fires domain.created', async () => {
      // Act
      const domain = await createDomain(s.deps, LIVE, 'acme.example');

      // Assert
      const at = new Date(T0).toISOString();
      expect(domain).toEqual({
        ...LIVE,
        id: derivedId('dom', LIVE.accountId, 'live', 'acme.example'),
        name: 'acme.example',
        status: 'pending',
        records: await new ScriptedDomainProvider().register('acme.example'),
        // Tracking is off unless the request turns it on.
        openTracking: false,
        clickTracking: false,
        capabilities: { sending: 'enabled', receiving: 'disabled' },
        createdAt: at,
        updatedAt: at,
      });
      expect(s.domainProvider.registered).toEqual(['acme.example']);
      expect(await s.domains.get(LIVE, domain.id)).toEqual(domain);
      expect(s.published()).toEqual([
        {
          id: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
          type: 'domain.created',
          ...LIVE,
          timestamp: at,
          data: { id: domain.id, name: 'acme.example', status: 'pending', created_at: at },
        },
      ]);
    });

    it('refuses a name the tenant has with 409 domain_exists, keeps the first, and fires nothing more', async () => {
      // Arrange
      const first = await createDomain(s.deps, LIVE, 'acme.example');
      s.clock.advance(60_000);

      // Act
      const error = await createDomain(s.deps, LIVE, 'acme.example').catch((e: unknown) => e);

      // Assert
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ status: 409, code: 'domain_exists' });
      expect(await s.domains.list(LIVE)).toEqual([first]);
      expect(s.published().map((e) => e.type)).toEqual(['domain.created']);
    });

    it('lets the other mode of the same account add the same name, with its own id; another account may not', async () => {
      // Act
      const live = await createDomain(s.deps, LIVE, 'acme.example');
      const test = await createDomain(s.deps, TEST, 'acme.example');
      const other = createDomain(s.deps, { accountId: 'acct_other', mode: 'live' }, 'acme.example');

      // Assert
      expect(live.id).not.toBe(test.id);
      expect(live.id).toBe(domainId(LIVE, 'acme.example'));
      await expect(other).rejects.toMatchObject({ code: 'domain_taken' });
    });
  });

  describe('verifyDomain', () => {
    it('while the provider says pending: no change, no event, updatedAt kept', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example');
      s.clock.advance(60_000);

      // Act
      const checked = await verifyDomain(s.deps, LIVE, domain.id);

      // Assert
      expect(checked).toEqual(domain);
      expect(s.published().map((e) => e.type)).toEqual(['domain.created']);
    });

    it('once verified: stores the status with updatedAt and fires domain.updated once; checking again fires nothing', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example');
      s.clock.advance(120_000);
      s.domainProvider.statuses.set('acme.example', 'verified');

      // Act
      const verified = await verifyDomain(s.deps, LIVE, domain.id);
      s.clock.advance(60_000);
      const again = await verifyDomain(s.deps, LIVE, domain.id);

      // Assert
      const at = new Date(T0 + 120_000).toISOString();
      expect(verified).toEqual({ ...domain, status: 'verified', updatedAt: at });
      expect(again).toEqual(verified);
      expect(await s.domains.get(LIVE, domain.id)).toEqual(verified);
      const updates = s.published().filter((e) => e.type === 'domain.updated');
      expect(updates).toHaveLength(1);
      expect(updates[0]).toMatchObject({
        ...LIVE,
        timestamp: at,
        data: { id: domain.id, name: 'acme.example', status: 'verified' },
      });
    });

    it('fires domain.updated for each change of state: pending → failed → verified', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example');

      // Act
      s.domainProvider.statuses.set('acme.example', 'failed');
      await verifyDomain(s.deps, LIVE, domain.id);
      await verifyDomain(s.deps, LIVE, domain.id);
      s.domainProvider.statuses.set('acme.example', 'verified');
      await verifyDomain(s.deps, LIVE, domain.id);

      // Assert
      expect(
        s
          .published()
          .filter((e) => e.type === 'domain.updated')
          .map((e) => e.data.status),
      ).toEqual(['failed', 'verified']);
    });

    it('losing the race to the reconciler: returns the stored domain and fires no second domain.updated', async () => {
      // Arrange: while this request asks the provider, the reconciler stores the change first.
      const domain = await createDomain(s.deps, LIVE, 'acme.example');
      s.domainProvider.statuses.set('acme.example', 'verified');
      let raced = false;
      s.domainProvider.onStatus = async () => {
        if (raced) return;
        raced = true;
        await checkPendingDomains(s.deps);
      };

      // Act
      const result = await verifyDomain(s.deps, LIVE, domain.id);

      // Assert
      expect(result.status).toBe('verified');
      expect(s.published().filter((e) => e.type === 'domain.updated')).toHaveLength(1);
    });

    it('is 404 for an unknown id and for another tenant’s domain', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example');

      // Act / Assert
      await expect(verifyDomain(s.deps, LIVE, 'dom_unknown')).rejects.toBeInstanceOf(NotFoundError);
      await expect(verifyDomain(s.deps, TEST, domain.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(getDomain(s.deps, { accountId: 'acct_other', mode: 'live' }, domain.id)).rejects.toBeInstanceOf(
        NotFoundError,
      );
    });
  });

  describe('checkPendingDomains', () => {
    it('re-checks every pending domain of every tenant, announcing each change once', async () => {
      // Arrange
      const a = await createDomain(s.deps, LIVE, 'a.example');
      const b = await createDomain(s.deps, TEST, 'b.example');
      await createDomain(s.deps, { accountId: 'acct_other', mode: 'live' }, 'c.example');
      s.domainProvider.statuses.set('a.example', 'verified');
      s.domainProvider.statuses.set('b.example', 'failed');

      // Act
      const firstRun = await checkPendingDomains(s.deps);
      const secondRun = await checkPendingDomains(s.deps);

      // Assert
      expect(firstRun).toBe(3);
      expect(secondRun).toBe(1);
      const updates = s.published().filter((e) => e.type === 'domain.updated');
      expect(updates.map((e) => [e.accountId, e.mode, e.data.id, e.data.status])).toEqual(
        expect.arrayContaining([
          [LIVE.accountId, 'live', a.id, 'verified'],
          [TEST.accountId, 'test', b.id, 'failed'],
        ]),
      );
      expect(updates).toHaveLength(2);
      expect((await s.domains.listPending(100)).map((d) => d.name)).toEqual(['c.example']);
    });

    it('checks the other domains when SES refuses to answer for one, then reports the refusal', async () => {
      // Arrange: the first pending domain's identity predates tagging (AccessDenied); the next ones verified.
      for (const name of ['a.example', 'b.example', 'c.example']) await createDomain(s.deps, LIVE, name);
      s.domainProvider.onStatus = (name) => {
        if (name === 'a.example') throw new Error('AccessDenied');
      };
      s.domainProvider.statuses.set('b.example', 'verified');
      s.domainProvider.statuses.set('c.example', 'verified');

      // Act
      const run = checkPendingDomains(s.deps);

      // Assert
      await expect(run).rejects.toThrow(/1 of 3 pending domains could not be checked/);
      expect((await s.domains.listPending(100)).map((d) => d.name)).toEqual(['a.example']);
    });

    it('checks at most `limit` domains a run', async () => {
      // Arrange
      for (const name of ['a.example', 'b.example', 'c.example']) await createDomain(s.deps, LIVE, name);

      // Act
      const checked = await checkPendingDomains(s.deps, 2);

      // Assert
      expect(checked).toBe(2);
    });

    it('with nothing pending, asks the provider nothing and fires nothing', async () => {
      // Arrange
      const asked: string[] = [];
      s.domainProvider.onStatus = (name) => {
        asked.push(name);
      };

      // Act
      const checked = await checkPendingDomains(s.deps);

      // Assert
      expect(checked).toBe(0);
      expect(asked).toEqual([]);
      expect(s.published()).toEqual([]);
    });
  });

  describe('updateDomainTracking', () => {
    it('changes the flags given and fires domain.updated once; asking for what is already set writes nothing', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example', { openTracking: true });
      s.clock.advance(60_000);

      // Act
      const same = await updateDomainTracking(s.deps, LIVE, domain.id, { openTracking: true, clickTracking: false });
      const clicks = await updateDomainTracking(s.deps, LIVE, domain.id, { clickTracking: true });

      // Assert
      expect(same).toEqual(domain);
      expect(clicks).toEqual({ ...domain, clickTracking: true, updatedAt: new Date(T0 + 60_000).toISOString() });
      expect(await s.domains.get(LIVE, domain.id)).toEqual(clicks);
      expect(s.published().map((e) => e.type)).toEqual(['domain.created', 'domain.updated']);
      await expect(updateDomainTracking(s.deps, LIVE, 'dom_missing', { openTracking: true })).rejects.toThrow(
        NotFoundError,
      );
    });
  });

  describe('deleteDomain', () => {
    it('removes the provider identity and the domain, and fires domain.deleted', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example');
      s.clock.advance(60_000);

      // Act
      const deleted = await deleteDomain(s.deps, LIVE, domain.id);

      // Assert
      expect(deleted).toEqual(domain);
      expect(s.domainProvider.removed).toEqual(['acme.example']);
      expect(await s.domains.get(LIVE, domain.id)).toBeNull();
      expect(s.published().at(-1)).toMatchObject({
        type: 'domain.deleted',
        ...LIVE,
        timestamp: new Date(T0 + 60_000).toISOString(),
        data: { id: domain.id, name: 'acme.example', status: 'pending' },
      });
    });

    it('is 404 the second time, and for another tenant’s domain, without touching the provider', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example');
      await deleteDomain(s.deps, LIVE, domain.id);

      // Act
      const again = deleteDomain(s.deps, LIVE, domain.id);
      const kept = await createDomain(s.deps, TEST, 'kept.example');
      const foreign = deleteDomain(s.deps, LIVE, kept.id);

      // Assert
      await expect(again).rejects.toBeInstanceOf(NotFoundError);
      await expect(foreign).rejects.toBeInstanceOf(NotFoundError);
      expect(s.domainProvider.removed).toEqual(['acme.example']);
      expect(await s.domains.get(TEST, kept.id)).toEqual(kept);
      expect(s.published().filter((e) => e.type === 'domain.deleted')).toHaveLength(1);
    });

    it('lets the name be added again afterwards', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example');
      await deleteDomain(s.deps, LIVE, domain.id);

      // Act
      const again = await createDomain(s.deps, LIVE, 'acme.example');

      // Assert
      expect(again.id).toBe(domain.id);
      expect(again.status).toBe('pending');
    });
  });

  // ScriptedDomainProvider keys identities by name only, as SES does (one identity per name in Sendflow's AWS
  // account and region, shared by every tenant): the live-mode name claim is what keeps tenants apart.
  describe('tenants sharing a domain name (one provider identity per name)', () => {
    it('another account cannot add a name an account holds (409 domain_taken), so cannot send as it', async () => {
      // Arrange
      const owner: Tenant = { accountId: 'acct_owner', mode: 'live' };
      const other: Tenant = { accountId: 'acct_other', mode: 'live' };
      const owned = await createDomain(s.deps, owner, 'acme.example');
      s.domainProvider.statuses.set('acme.example', 'verified');
      await verifyDomain(s.deps, owner, owned.id);

      // Act
      const attempt = createDomain(s.deps, other, 'acme.example');

      // Assert
      await expect(attempt).rejects.toMatchObject({ status: 409, code: 'domain_taken' });
      expect(await isVerifiedSender(s.deps, other, 'acme.example')).toBe(false);
      expect(s.domainProvider.registered).toEqual(['acme.example']);
    });

    it('deleting the test-mode domain keeps the live identity and the name; deleting both frees the name', async () => {
      // Arrange: test mode has its own (simulated) provider, as in production.
      const testProvider = new ScriptedDomainProvider();
      const deps = {
        ...s.deps,
        domainProviderFor: (mode: Tenant['mode']) => (mode === 'live' ? s.domainProvider : testProvider),
      };
      const live = await createDomain(deps, LIVE, 'acme.example');
      const test = await createDomain(deps, TEST, 'acme.example');
      s.domainProvider.statuses.set('acme.example', 'verified');
      await verifyDomain(deps, LIVE, live.id);

      // Act
      await deleteDomain(deps, TEST, test.id);

      // Assert
      expect(await isVerifiedSender(deps, LIVE, 'acme.example')).toBe(true);
      expect(s.domainProvider.removed).toEqual([]);
      await expect(createDomain(deps, { accountId: 'acct_other', mode: 'live' }, 'acme.example')).rejects.toMatchObject(
        {
          code: 'domain_taken',
        },
      );
      await deleteDomain(deps, LIVE, live.id);
      expect(s.domainProvider.removed).toEqual(['acme.example']);
      await expect(
        createDomain(deps, { accountId: 'acct_other', mode: 'live' }, 'acme.example'),
      ).resolves.toMatchObject({
        status: 'pending',
      });
    });
  });

  describe('name claims: live mode only (test mode never touches SES)', () => {
    it('a test-mode domain of one account never blocks another account’s live domain of that name', async () => {
      // Arrange
      const squatter: Tenant = { accountId: 'acct_squatter', mode: 'test' };
      await createDomain(s.deps, squatter, 'acme.example');

      // Act
      const live = await createDomain(s.deps, { accountId: 'acct_owner', mode: 'live' }, 'acme.example');

      // Assert
      expect(live).toMatchObject({ accountId: 'acct_owner', mode: 'live', status: 'pending' });
      expect([...s.domains.names]).toEqual([['acme.example', 'acct_owner']]);
    });

    it('another account’s live domain does not block a test-mode domain of that name either', async () => {
      await createDomain(s.deps, { accountId: 'acct_owner', mode: 'live' }, 'acme.example');
      const test = createDomain(s.deps, { accountId: 'acct_other', mode: 'test' }, 'acme.example');
      await expect(test).resolves.toMatchObject({ accountId: 'acct_other', mode: 'test' });
    });

    it('deleting a test-mode domain leaves another account’s live claim alone', async () => {
      // Arrange
      const test = await createDomain(s.deps, { accountId: 'acct_other', mode: 'test' }, 'acme.example');
      await createDomain(s.deps, { accountId: 'acct_owner', mode: 'live' }, 'acme.example');

      // Act
      await deleteDomain(s.deps, { accountId: 'acct_other', mode: 'test' }, test.id);

      // Assert
      expect(s.domains.names.get('acme.example')).toBe('acct_owner');
    });
  });

  describe('an identity the provider has and Sendflow did not create for this account', () => {
    it('is 409 domain_unavailable: nothing stored, no event, and the name claim released', async () => {
      // Arrange
      s.domainProvider.unavailable.add('operator.example');

      // Act
      const error = await createDomain(s.deps, LIVE, 'operator.example').catch((e: unknown) => e);

      // Assert
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ status: 409, code: 'domain_unavailable' });
      expect(await s.domains.list(LIVE)).toEqual([]);
      expect(s.domains.names.size).toBe(0);
      expect(s.published()).toEqual([]);
    });

    it('through SES: CreateEmailIdentity AlreadyExists on an untagged or foreign identity → 409, nothing stored, nothing deleted', async () => {
      // Arrange: the operator's own verified identity (untagged), and one another stage created.
      const ses = mockClient(SESv2Client);
      ses.on(CreateEmailIdentityCommand).rejects(new AlreadyExistsException({ message: 'exists', $metadata: {} }));
      ses
        .on(GetEmailIdentityCommand, { EmailIdentity: 'operator.example' })
        .resolves({ VerifiedForSendingStatus: true, DkimAttributes: { Status: 'SUCCESS', Tokens: ['t1', 't2', 't3'] } })
        .on(GetEmailIdentityCommand, { EmailIdentity: 'staging.example' })
        .resolves({
          VerifiedForSendingStatus: true,
          DkimAttributes: { Status: 'SUCCESS', Tokens: ['t1', 't2', 't3'] },
          Tags: identityTags('SendflowApi-staging', LIVE.accountId),
        });
      const provider = new SesDomainProvider(new SESv2Client({ region: 'eu-west-1' }), { owner: 'SendflowApi-prod' });
      const deps: DomainDeps = { ...s.deps, domainProviderFor: () => provider };

      // Act
      const results = await Promise.all(
        ['operator.example', 'staging.example'].map((name) => createDomain(deps, LIVE, name).catch((e: unknown) => e)),
      );

      // Assert
      for (const error of results) expect(error).toMatchObject({ status: 409, code: 'domain_unavailable' });
      expect(await s.domains.list(LIVE)).toEqual([]);
      expect(s.domains.names.size).toBe(0);
      expect(s.published()).toEqual([]);
      expect(ses).not.toHaveReceivedCommand(DeleteEmailIdentityCommand);
      ses.restore();
    });

    it('deleting a domain whose identity is no longer ours never deletes the identity', async () => {
      // Arrange: stored while ours; since then the identity was replaced by an untagged one of the operator.
      const ses = mockClient(SESv2Client);
      ses.on(CreateEmailIdentityCommand).resolves({ DkimAttributes: { Tokens: ['t1', 't2', 't3'] } });
      const provider = new SesDomainProvider(new SESv2Client({ region: 'eu-west-1' }), { owner: 'SendflowApi-prod' });
      const deps: DomainDeps = { ...s.deps, domainProviderFor: () => provider };
      const domain = await createDomain(deps, LIVE, 'acme.example');
      ses.on(GetEmailIdentityCommand).resolves({ VerifiedForSendingStatus: true });

      // Act
      await deleteDomain(deps, LIVE, domain.id);

      // Assert
      expect(ses).toHaveReceivedCommandWith(CreateEmailIdentityCommand, {
        Tags: identityTags('SendflowApi-prod', LIVE.accountId),
      });
      expect(ses).not.toHaveReceivedCommand(DeleteEmailIdentityCommand);
      expect(await s.domains.get(LIVE, domain.id)).toBeNull();
      ses.restore();
    });
  });

  describe('isVerifiedSender', () => {
    it('is true only for a verified domain of the same account and mode', async () => {
      // Arrange
      await createDomain(s.deps, LIVE, 'verified.example');
      await createDomain(s.deps, LIVE, 'pending.example');
      await createDomain(s.deps, TEST, 'testonly.example');
      s.domainProvider.statuses.set('verified.example', 'verified');
      s.domainProvider.statuses.set('testonly.example', 'verified');
      await checkPendingDomains(s.deps);

      // Act / Assert
      expect(await isVerifiedSender(s.deps, LIVE, 'verified.example')).toBe(true);
      expect(await isVerifiedSender(s.deps, LIVE, 'pending.example')).toBe(false);
      expect(await isVerifiedSender(s.deps, LIVE, 'testonly.example')).toBe(false);
      expect(await isVerifiedSender(s.deps, TEST, 'testonly.example')).toBe(true);
      expect(await isVerifiedSender(s.deps, { accountId: 'acct_other', mode: 'live' }, 'verified.example')).toBe(false);
      expect(await isVerifiedSender(s.deps, LIVE, 'unknown.example')).toBe(false);
      expect(await isVerifiedSender(s.deps, LIVE, 'sub.verified.example')).toBe(false);
    });

    it('is false again once a verified domain is deleted', async () => {
      // Arrange
      const domain = await createDomain(s.deps, LIVE, 'acme.example');
      s.domainProvider.statuses.set('acme.example', 'verified');
      await verifyDomain(s.deps, LIVE, domain.id);

      // Act
      await deleteDomain(s.deps, LIVE, domain.id);

      // Assert
      expect(await isVerifiedSender(s.deps, LIVE, 'acme.example')).toBe(false);
    });
  });
});
