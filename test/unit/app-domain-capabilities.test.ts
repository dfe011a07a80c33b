// Unit tests of domain capabilities (lambdas/app/domains/domains.ts) on in-memory fakes: the defaults, the MX
// record that comes and goes with receiving, receiving refused in test mode, domain.updated only on a change,
// sending disabled stops live sends, and receivingDomain(): only a verified live domain with receiving on
// receives, found through the live name claim whoever asks.
import { describe, expect, it } from 'vitest';
import {
  createDomain,
  type DomainDeps,
  isVerifiedSender,
  RECEIVING_MX_PRIORITY,
  receivingDomain,
  updateDomainCapabilities,
  verifyDomain,
} from '../../lambdas/app/domains/domains';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { ValidationError } from '../../lambdas/domain/errors';
import {
  FakeClock,
  InMemoryDomainRepository,
  RecordingEventPublisher,
  ScriptedDomainProvider,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const LIVE: Tenant = { accountId: 'acct_caps', mode: 'live' };
const OTHER: Tenant = { accountId: 'acct_other', mode: 'live' };
const TEST: Tenant = { accountId: 'acct_caps', mode: 'test' };
const MX = 'inbound-smtp.eu-west-1.amazonaws.com';

function setup(receivingMx: string | null = MX) {
  const domains = new InMemoryDomainRepository();
  const provider = new ScriptedDomainProvider();
  const events = new RecordingEventPublisher();
  const deps: DomainDeps = {
    domains,
    domainProviderFor: () => provider,
    events,
    clock: new FakeClock(T0),
    random: seededRandom('caps'),
    ...(receivingMx ? { receivingMx } : {}),
  };
  const published = () => events.published.flatMap((p) => p.events);
  return { deps, provider, published };
}

const mxOf = (records: readonly { type: string }[]) => records.filter((record) => record.type === 'MX');

describe('domain capabilities', () => {
  it('a new domain sends and does not receive, and has no MX record', async () => {
    // Arrange
    const { deps } = setup();

    // Act
    const domain = await createDomain(deps, LIVE, 'plain.example.com');

    // Assert
    expect(domain.capabilities).toEqual({ sending: 'enabled', receiving: 'disabled' });
    expect(mxOf(domain.records)).toEqual([]);
  });

  it('receiving on create adds the MX record (priority 10); turning it off with update removes it, with domain.updated', async () => {
    // Arrange
    const { deps, published } = setup();

    // Act
    const created = await createDomain(deps, LIVE, 'in.example.com', { capabilities: { receiving: 'enabled' } });
    const off = await updateDomainCapabilities(deps, LIVE, created.id, { receiving: 'disabled' });

    // Assert
    expect(created.capabilities).toEqual({ sending: 'enabled', receiving: 'enabled' });
    expect(mxOf(created.records)).toEqual([
      { type: 'MX', name: 'in.example.com', value: MX, priority: RECEIVING_MX_PRIORITY },
    ]);
    expect(created.records.filter((record) => record.type === 'CNAME')).toHaveLength(3);
    expect(off.capabilities).toEqual({ sending: 'enabled', receiving: 'disabled' });
    expect(mxOf(off.records)).toEqual([]);
    expect(off.records).toHaveLength(3);
    expect(published().map((event) => event.type)).toEqual(['domain.created', 'domain.updated']);
  });

  it('an update that changes nothing writes nothing and announces nothing', async () => {
    // Arrange
    const { deps, published } = setup();
    const domain = await createDomain(deps, LIVE, 'same.example.com');

    // Act
    const same = await updateDomainCapabilities(deps, LIVE, domain.id, { sending: 'enabled' });

    // Assert
    expect(same).toEqual(domain);
    expect(published().map((event) => event.type)).toEqual(['domain.created']);
  });

  it('receiving in test mode is 422 on create and on update, and nothing is stored', async () => {
    // Arrange
    const { deps } = setup();
    const domain = await createDomain(deps, TEST, 'test.example.com');

    // Act
    const onCreate = createDomain(deps, TEST, 'other.example.com', { capabilities: { receiving: 'enabled' } });
    const onUpdate = updateDomainCapabilities(deps, TEST, domain.id, { receiving: 'enabled' });

    // Assert
    await expect(onCreate).rejects.toBeInstanceOf(ValidationError);
    await expect(onUpdate).rejects.toBeInstanceOf(ValidationError);
    expect(await deps.domains.list(TEST)).toHaveLength(1);
    expect((await deps.domains.get(TEST, domain.id))?.capabilities?.receiving).toBe('disabled');
  });

  it('without a configured MX host (a deployment that does not receive), receiving is refused', async () => {
    // Arrange
    const { deps } = setup(null);

    // Act
    const creating = createDomain(deps, LIVE, 'nomx.example.com', { capabilities: { receiving: 'enabled' } });

    // Assert
    await expect(creating).rejects.toThrow(/does not receive email/);
    expect(await createDomain(deps, LIVE, 'nomx.example.com')).toMatchObject({
      capabilities: { sending: 'enabled', receiving: 'disabled' },
    });
  });

  it('sending disabled: the verified domain is no longer a sender', async () => {
    // Arrange
    const { deps, provider } = setup();
    const domain = await createDomain(deps, LIVE, 'quiet.example.com');
    provider.statuses.set('quiet.example.com', 'verified');
    await verifyDomain(deps, LIVE, domain.id);
    const before = await isVerifiedSender(deps, LIVE, 'quiet.example.com');

    // Act
    await updateDomainCapabilities(deps, LIVE, domain.id, { sending: 'disabled' });

    // Assert
    expect(before).toBe(true);
    expect(await isVerifiedSender(deps, LIVE, 'quiet.example.com')).toBe(false);
  });

  it('receivingDomain(): only once verified and receiving, found by name in any case; never a test-mode domain', async () => {
    // Arrange
    const { deps, provider } = setup();
    const live = await createDomain(deps, LIVE, 'rx.example.com', { capabilities: { receiving: 'enabled' } });
    await createDomain(deps, TEST, 'tx.example.com');
    await createDomain(deps, OTHER, 'plain.example.com');
    provider.statuses.set('rx.example.com', 'verified');
    provider.statuses.set('plain.example.com', 'verified');
    const pending = await receivingDomain(deps, 'rx.example.com');

    // Act
    await verifyDomain(deps, LIVE, live.id);

    // Assert
    expect(pending).toBeNull();
    expect((await receivingDomain(deps, 'RX.Example.com'))?.accountId).toBe(LIVE.accountId);
    expect(await receivingDomain(deps, 'tx.example.com')).toBeNull();
    expect(await receivingDomain(deps, 'plain.example.com')).toBeNull();
    expect(await receivingDomain(deps, 'nobody.example.com')).toBeNull();
    await updateDomainCapabilities(deps, LIVE, live.id, { receiving: 'disabled' });
    expect(await receivingDomain(deps, 'rx.example.com')).toBeNull();
  });
});
