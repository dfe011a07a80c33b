// Fault injection between a state change and its publish (lambdas/app/outbox.ts), for domains, contacts and
// one-click unsubscribes, on in-memory fakes with a fake clock: a publisher that throws once (as a crash right
// after the write would leave things), and a relay whose clear throws after the publish. The use case still
// answers (its change is stored, its events with it); the reconciler's sweep, once the grace has passed,
// publishes what is left, with the very event ids recorded, and leaves every outbox empty.
import { beforeEach, describe, expect, it } from 'vitest';
import { confirmContact, createContact, deleteContact, updateContact } from '../../lambdas/app/contacts/contacts';
import { createDomain, deleteDomain, verifyDomain } from '../../lambdas/app/domains/domains';
import type { EmailRecord } from '../../lambdas/app/emails/ports';
import { unsubscribe } from '../../lambdas/app/emails/unsubscribe';
import { relay } from '../../lambdas/app/outbox';
import type { EventPublisher, Tenant } from '../../lambdas/app/webhooks/ports';
import { reconcile } from '../../lambdas/app/webhooks/reconcile';
import { newEvent, type SendflowEvent } from '../../lambdas/domain/events';
import { signToken } from '../../lambdas/domain/tokens';
import {
  FakeClock,
  fixedLinks,
  InMemoryContactRepository,
  InMemoryDeliveryRepository,
  InMemoryDomainRepository,
  InMemoryEmailRepository,
  InMemorySuppressionList,
  RecordingRetryScheduler,
  RecordingSendScheduler,
  ScriptedDomainProvider,
  seededRandom,
} from '../support/fakes';
import { InMemoryReceivedEmailRepository } from '../support/inbound-fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const TENANT: Tenant = { accountId: 'acct_outbox', mode: 'test' };
const GRACE_MS = 30_000;
const SECRET = 'outbox-link-secret';

/** A publisher that fails its next `failures` calls (a queue outage, or the process dying before it). */
class FlakyPublisher implements EventPublisher {
  readonly published: SendflowEvent[] = [];
  failures = 0;

  async publish(events: readonly SendflowEvent[]): Promise<void> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('events queue unavailable (injected)');
    }
    this.published.push(...structuredClone([...events]));
  }
}

function setup() {
  const clock = new FakeClock(T0);
  const events = new FlakyPublisher();
  const provider = new ScriptedDomainProvider();
  const deps = {
    clock,
    events,
    random: seededRandom('outbox'),
    links: fixedLinks(SECRET),
    domains: new InMemoryDomainRepository(),
    domainProviderFor: () => provider,
    contacts: new InMemoryContactRepository(),
    suppressions: new InMemorySuppressionList(),
    receivedEmails: new InMemoryReceivedEmailRepository(),
    emails: new InMemoryEmailRepository(),
    deliveries: new InMemoryDeliveryRepository(),
    retries: new RecordingRetryScheduler(),
    sendScheduler: new RecordingSendScheduler(),
  };
  const outboxes = [deps.domains.outbox, deps.contacts.outbox, deps.suppressions.outbox];
  const waiting = () => outboxes.flatMap((outbox) => outbox.waiting());
  /** The reconciler's run, `afterMs` later. */
  const sweep = async (afterMs = GRACE_MS) => {
    clock.advance(afterMs);
    await reconcile(deps, { graceMs: GRACE_MS });
  };
  return { clock, events, provider, deps, waiting, sweep };
}

const ids = (events: readonly SendflowEvent[]) => events.map((event) => event.id);

describe('the outbox under faults', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(() => {
    s = setup();
  });

  /** Each use case that changes state and fires events, with what it fires. */
  const cases: { name: string; type: string; act: (x: ReturnType<typeof setup>) => Promise<unknown> }[] = [
    { name: 'createDomain', type: 'domain.created', act: (x) => createDomain(x.deps, TENANT, 'acme.example') },
    {
      name: 'verifyDomain',
      type: 'domain.updated',
      act: async (x) => {
        const domain = await withEventsWorking(x, () => createDomain(x.deps, TENANT, 'acme.example'));
        x.provider.statuses.set('acme.example', 'verified');
        return verifyDomain(x.deps, TENANT, domain.id);
      },
    },
    {
      name: 'deleteDomain',
      type: 'domain.deleted',
      act: async (x) => {
        const domain = await withEventsWorking(x, () => createDomain(x.deps, TENANT, 'acme.example'));
        return deleteDomain(x.deps, TENANT, domain.id);
      },
    },
    {
      name: 'createContact',
      type: 'contact.created',
      act: (x) => createContact(x.deps, TENANT, { email: 'ada@example.com' }),
    },
    {
      name: 'updateContact',
      type: 'contact.updated',
      act: async (x) => {
        const { contact } = await withEventsWorking(x, () => createContact(x.deps, TENANT, { email: 'a@example.com' }));
        return updateContact(x.deps, TENANT, contact.id, { firstName: 'Ada' });
      },
    },
    {
      name: 'confirmContact',
      type: 'contact.subscribed',
      act: async (x) => {
        const { confirmationUrl } = await withEventsWorking(x, () =>
          createContact(x.deps, TENANT, { email: 'a@example.com' }),
        );
        return confirmContact(x.deps, confirmationUrl.split('/').pop() as string);
      },
    },
    {
      name: 'deleteContact',
      type: 'contact.deleted',
      act: async (x) => {
        const { contact } = await withEventsWorking(x, () => createContact(x.deps, TENANT, { email: 'a@example.com' }));
        return deleteContact(x.deps, TENANT, contact.id);
      },
    },
    {
      name: 'unsubscribe',
      type: 'email.unsubscribed',
      act: async (x) => {
        await x.deps.emails.createMany([sentEmail()]);
        const token = signToken(
          'unsubscribe',
          { a: TENANT.accountId, m: TENANT.mode, e: 'email_1', r: 'ada@example.com' },
          SECRET,
        );
        return unsubscribe(x.deps, token);
      },
    },
  ];

  describe.each(cases)('$name', ({ type, act }) => {
    it(`publish fails: the change stands, ${type} waits in the outbox, and the sweep publishes it once`, async () => {
      // Arrange
      s.events.failures = 1;

      // Act
      await act(s);
      const recorded = s.waiting();
      await s.sweep(GRACE_MS - 1);
      const beforeGrace = [...s.events.published];
      await s.sweep(1);
      await s.sweep();

      // Assert
      expect(recorded.map((event) => event.type)).toEqual([type]);
      expect(beforeGrace).toEqual([]);
      expect(ids(s.events.published)).toEqual(ids(recorded));
      expect(s.waiting()).toEqual([]);
    });

    it(`the clear after the publish fails: the sweep publishes the same ${type} again (same id), then it is gone`, async () => {
      // Arrange: every outbox's next clear throws.
      for (const outbox of [s.deps.domains.outbox, s.deps.contacts.outbox, s.deps.suppressions.outbox]) {
        outbox.failClears = 1;
      }

      // Act
      await act(s);
      const published = [...s.events.published];
      await s.sweep();
      await s.sweep();

      // Assert: at-least-once on the queue, one event id; the dispatcher's delivery ids make it once per webhook.
      expect(published.map((event) => event.type)).toEqual([type]);
      expect(ids(s.events.published)).toEqual([...ids(published), ...ids(published)]);
      expect(s.waiting()).toEqual([]);
    });
  });

  it('relay() never throws: a failed publish leaves the events for the sweep and says so', async () => {
    // Arrange
    const event = newEvent({ type: 'domain.created', ...TENANT, at: T0, data: {} }, s.deps.random);
    const pending = s.deps.domains.outbox.record({ tenant: 'x', id: 'y' }, [event]);
    s.events.failures = 1;

    // Act
    const failed = await relay(s.deps, s.deps.domains.outbox, pending);
    const retried = await relay(s.deps, s.deps.domains.outbox, pending);
    const nothing = await relay(s.deps, s.deps.domains.outbox, null);

    // Assert
    expect([failed, retried, nothing]).toEqual([false, true, true]);
    expect(ids(s.events.published)).toEqual([event.id]);
    expect(s.waiting()).toEqual([]);
  });
});

/** Runs a set-up step with the publisher working, keeping the failure count for the step under test. */
async function withEventsWorking<T>(x: ReturnType<typeof setup>, step: () => Promise<T>): Promise<T> {
  const failures = x.events.failures;
  const clears = [x.deps.domains.outbox, x.deps.contacts.outbox, x.deps.suppressions.outbox].map((o) => o.failClears);
  x.events.failures = 0;
  for (const outbox of [x.deps.domains.outbox, x.deps.contacts.outbox, x.deps.suppressions.outbox]) {
    outbox.failClears = 0;
  }
  const result = await step();
  x.events.failures = failures;
  [x.deps.domains.outbox, x.deps.contacts.outbox, x.deps.suppressions.outbox].forEach((outbox, i) => {
    outbox.failClears = clears[i] ?? 0;
  });
  x.events.published.length = 0;
  return result;
}

function sentEmail(): EmailRecord {
  return {
    id: 'email_1',
    ...TENANT,
    from: 'news@acme.example',
    to: ['ada@example.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'News',
    text: 'Hi',
    headers: {},
    tags: [],
    createdAt: new Date(T0).toISOString(),
    sentAt: new Date(T0).toISOString(),
    suppressed: [],
    unsubscribeUrls: {},
  };
}
