// Unit tests for the event catalog (lambdas/domain/events.ts, spec §6.1), legacy-name normalization (spec §4.1
// rule 3, §9.2, DESIGN §4: stored normalized, deduplicated) and the `standard` payload (spec §2.3).
import { describe, expect, it } from 'vitest';
import {
  EVENT_TYPES,
  editDistance,
  normalizeEventName,
  normalizeEventNames,
  type SendflowEvent,
  standardPayload,
  unknownEventTypeMessage,
} from '../../lambdas/domain/events';

/** Spec §6.1, in the spec's order. */
const SPEC_EVENTS = [
  'email.scheduled',
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.failed',
  'email.suppressed',
  'email.unsubscribed',
  'email.received',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.subscribed',
];

/** Issue 18: about the account's own webhooks (auto-disable). */
const WEBHOOK_EVENTS = ['webhook.failing', 'webhook.disabled'];

/** Issue 30: Resend's suppression events (behind the suppressionEvents stored format). */
const SUPPRESSION_EVENTS = ['suppression.added', 'suppression.removed'];
/** Issue 29: the account's sending reputation (a warning, then a pause). */
const ACCOUNT_EVENTS = ['account.reputation_warning'];

describe('event catalog', () => {
  it('is exactly the spec §6.1 list, the suppression, webhook and account events, without the test event', () => {
    expect([...EVENT_TYPES]).toEqual([...SPEC_EVENTS, ...SUPPRESSION_EVENTS, ...WEBHOOK_EVENTS, ...ACCOUNT_EVENTS]);
    expect(EVENT_TYPES).not.toContain('test');
  });
});

describe('normalizeEventName', () => {
  it.each([
    ['delivered', 'email.delivered'],
    ['bounced', 'email.bounced'],
    ['delivery_delayed', 'email.delivery_delayed'],
    ['opened', 'email.opened'],
    ['clicked', 'email.clicked'],
    ['complained', 'email.complained'],
    ['sent', 'email.sent'],
    ['scheduled', 'email.scheduled'],
    ['failed', 'email.failed'],
    ['suppressed', 'email.suppressed'],
    ['unsubscribed', 'email.unsubscribed'],
    ['received', 'email.received'],
  ])('maps the legacy name %s to %s', (legacy, prefixed) => {
    expect(normalizeEventName(legacy)).toBe(prefixed);
  });

  it.each(SPEC_EVENTS)('passes the prefixed name %s through', (name) => {
    expect(normalizeEventName(name)).toBe(name);
  });

  it.each([
    ['the test event', 'test'],
    ['an underscore instead of the dot', 'domain_created'],
    ['an unknown email event', 'email.nope'],
    ['the empty string', ''],
    ['blanks only', '   '],
    ['a legacy name of a non-email event (legacy names are email events only)', 'created'],
    ['a double prefix', 'email.email.delivered'],
    ['a bare prefix', 'email.'],
    ['a different case', 'Email.Delivered'],
    ['a blank inside the name', 'email. delivered'],
    ['a wildcard', 'email.*'],
  ])('rejects %s (%j)', (_, name) => {
    expect(normalizeEventName(name)).toBeNull();
  });

  it('ignores blanks around a name (copy-pasted input), for both forms', () => {
    expect(normalizeEventName('contact.created ')).toBe('contact.created');
    expect(normalizeEventName('\tdelivered\n')).toBe('email.delivered');
  });
});

describe('normalizeEventNames', () => {
  it('normalizes, deduplicates and orders by catalog', () => {
    expect(normalizeEventNames(['contact.created', 'bounced', 'delivered', 'email.delivered', 'email.sent'])).toEqual({
      events: ['email.sent', 'email.delivered', 'email.bounced', 'contact.created'],
    });
  });

  it("dedupes 'delivered' + 'email.delivered' to one subscription", () => {
    expect(normalizeEventNames(['delivered', 'email.delivered'])).toEqual({ events: ['email.delivered'] });
    expect(normalizeEventNames(['email.delivered', ' delivered', 'delivered'])).toEqual({
      events: ['email.delivered'],
    });
  });

  it('reports every unknown name as given, in input order, and no events', () => {
    const result = normalizeEventNames(['delivered', 'test', 'domain_created', 'email.nope', '', 'contact.created ']);

    expect(result).toEqual({ unknown: ['test', 'domain_created', 'email.nope', ''] });
    expect(result).not.toHaveProperty('events');
  });

  it('accepts the whole catalog, and all legacy names at once', () => {
    expect(normalizeEventNames([...SPEC_EVENTS].reverse())).toEqual({ events: SPEC_EVENTS });
    const legacy = SPEC_EVENTS.filter((name) => name.startsWith('email.')).map((name) => name.slice('email.'.length));
    expect(normalizeEventNames(legacy)).toEqual({ events: SPEC_EVENTS.filter((name) => name.startsWith('email.')) });
  });
});

describe('unknownEventTypeMessage', () => {
  it.each([
    ['email.deliverd', 'email.delivered'],
    ['deliverd', 'email.delivered'],
    ['EMAIL.BOUNCED', 'email.bounced'],
    ['domain_created', 'domain.created'],
    ['contact.update', 'contact.updated'],
  ])('suggests the closest type for %s', (name, closest) => {
    expect(unknownEventTypeMessage(name)).toContain(`Did you mean "${closest}"?`);
  });

  it('suggests nothing for a name far from every type, and always lists every valid type', () => {
    const message = unknownEventTypeMessage('nonsense');
    expect(message).not.toContain('Did you mean');
    expect(message).toBe(`Unknown event type "nonsense". Valid types: ${EVENT_TYPES.join(', ')}.`);
  });

  it('quotes at most 100 characters of the name', () => {
    expect(unknownEventTypeMessage('x'.repeat(5000)).length).toBeLessThan(600);
  });

  it('counts edits like Levenshtein', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('flaw', 'lawn')).toBe(2);
  });
});

describe('standardPayload (spec §2.3)', () => {
  const event: SendflowEvent = {
    id: 'evt_01',
    type: 'email.bounced',
    accountId: 'acct_1',
    mode: 'live',
    timestamp: '2026-01-01T12:00:00.000Z',
    emailId: 'em_01',
    to: 'bob@example.com',
    data: { bounce_type: 'Permanent', bounce_sub_type: 'General', refused_by_account_suppression_list: false },
  };

  it("has exactly id, type, email_id, to, timestamp, created_at (Resend's), sequence, data in that order, and no internal fields", () => {
    // Act
    const body = standardPayload(event);

    // Assert
    const parsed = JSON.parse(body);
    expect(Object.keys(parsed)).toEqual([
      'id',
      'type',
      'email_id',
      'to',
      'timestamp',
      'created_at',
      'sequence',
      'data',
    ]);
    expect(parsed).toEqual({
      id: 'evt_01',
      type: 'email.bounced',
      email_id: 'em_01',
      to: 'bob@example.com',
      timestamp: '2026-01-01T12:00:00.000Z',
      created_at: '2026-01-01T12:00:00.000Z',
      // The email id carries no time here: the epoch is the base (domain/email/sequence.ts).
      sequence: Date.parse('2026-01-01T12:00:00.000Z') * 16 + 6,
      data: {
        bounce_type: 'Permanent',
        bounce_sub_type: 'General',
        refused_by_account_suppression_list: false,
        // Resend's fields: the email (its id carries no time here: the event's time), the recipient as a list.
        email_id: 'em_01',
        created_at: '2026-01-01T12:00:00.000Z',
        to: ['bob@example.com'],
        bounce: { message: '', subType: 'General', type: 'Permanent' },
      },
    });
    expect(body).not.toMatch(/acct_1|accountId|mode/);
  });

  it('is byte-stable: the same event always gives the same body (retries sign the unchanged body)', () => {
    expect(standardPayload(event)).toBe(standardPayload({ ...event, data: { ...event.data } }));
  });

  it('omits email_id and to for events that have none (domain, contact), keeping the order of the rest', () => {
    const parsed = JSON.parse(
      standardPayload({
        id: 'evt_02',
        type: 'domain.updated',
        accountId: 'acct_1',
        mode: 'test',
        timestamp: '2026-01-01T12:00:00.000Z',
        data: { status: 'verified' },
      }),
    );

    expect(Object.keys(parsed)).toEqual(['id', 'type', 'timestamp', 'created_at', 'data']);
    expect(parsed.data).toEqual({ status: 'verified' });
  });

  it('carries the same sequence on every render of one email event (retries and replays send the same body)', () => {
    const first = JSON.parse(standardPayload(event)).sequence;
    expect(Number.isSafeInteger(first)).toBe(true);
    expect(JSON.parse(standardPayload({ ...event, to: 'carol@example.com' })).sequence).toBe(first);
  });
});
