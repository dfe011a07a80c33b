// Unit tests for the SES event mapping (lambdas/adapters/ses/map-ses-event.ts) and the provider-events queue
// handler, on fixtures written from the documented SES event shapes (test/fixtures/ses: every event type and
// every bounce type/sub-type, as EventBridge delivers them): which of our events each becomes, for whom, when,
// with what data; both account-suppression cases; deterministic ids; what is skipped and what fails.
import { readdirSync, readFileSync } from 'node:fs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { mapSesEvent, SEND_IS_THE_WORKERS } from '../../lambdas/adapters/ses/map-ses-event';
import { createSesEventsHandler } from '../../lambdas/adapters/ses/ses-events-handler';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { timeOrderedId } from '../../lambdas/domain/ids';
import { compactTrace } from '../../lambdas/domain/trace-context';
import { eventMessage } from '../../lambdas/handlers/queue/messages';

const FIXTURES = new URL('../fixtures/ses/', import.meta.url);
const EMAIL_ID = 'email_01jdxk3m7q8r9s0t1v2w3x4y5z';
const ACCOUNT_ID = 'acct_01jd5e6f7g8h9j0k1m2n3p4q5r';
const COMMON = { from: 'Acme Billing <billing@acme.example>', subject: 'Your November invoice' };

interface Envelope {
  id: string;
  'detail-type': string;
  detail: { eventType: string; mail: { messageId: string; tags: Record<string, string[]> } } & Record<string, unknown>;
}

function fixture(name: string): Envelope {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8'));
}

function mapped(name: string): SendflowEvent[] {
  const result = mapSesEvent(fixture(name).detail);
  if (result.kind !== 'events') throw new Error(`${name} was skipped: ${result.why}`);
  return result.events;
}

/** What a webhook consumer sees of each event: type, recipient, time and data. */
const view = (events: SendflowEvent[]) =>
  events.map(({ type, to, timestamp, data }) => ({ type, to, timestamp, data }));

describe('every fixture', () => {
  const names = readdirSync(FIXTURES)
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.replace(/\.json$/, ''));

  it('covers every SES event type and every documented bounce type and sub-type', () => {
    const types = new Set(names.map((n) => fixture(n).detail.eventType));
    expect([...types].sort()).toEqual(
      [
        'Bounce',
        'Click',
        'Complaint',
        'Delivery',
        'DeliveryDelay',
        'Open',
        'Reject',
        'Rendering Failure',
        'Send',
        'Subscription',
      ].sort(),
    );
    const bounces = names
      .map((n) => fixture(n).detail)
      .filter((d) => d.eventType === 'Bounce')
      .map((d) => {
        const bounce = d.bounce as { bounceType: string; bounceSubType: string };
        return `${bounce.bounceType}/${bounce.bounceSubType}`;
      });
    expect(bounces.sort()).toEqual(
      [
        'Undetermined/Undetermined',
        'Permanent/General',
        'Permanent/NoEmail',
        'Permanent/Suppressed',
        'Permanent/OnAccountSuppressionList',
        'Transient/General',
        'Transient/MailboxFull',
        'Transient/MessageTooLarge',
        'Transient/ContentRejected',
        'Transient/AttachmentRejected',
      ].sort(),
    );
  });

  it.each(names.filter((n) => !['subscription', 'send', 'send-untagged'].includes(n)))(
    '%s maps to well-formed events of our email, account and mode, ids derived from the SES event',
    (name) => {
      // Act
      const first = mapped(name);
      const again = mapped(name);

      // Assert
      expect(first.length).toBeGreaterThan(0);
      expect(again.map((e) => e.id)).toEqual(first.map((e) => e.id));
      expect(new Set(first.map((e) => e.id)).size).toBe(first.length);
      for (const event of first) {
        expect(eventMessage.parse(event)).toEqual(event);
        expect(event).toMatchObject({ accountId: ACCOUNT_ID, mode: 'live', emailId: EMAIL_ID });
        expect(event.id).toMatch(/^evt_[0-9a-z]{26}$/);
        expect(event.data).toMatchObject(COMMON);
        // The id's time part is the event's own time: the delivery log orders by it.
        const timePart = timeOrderedId('evt', Date.parse(event.timestamp), (n) => new Uint8Array(n)).slice(4, 14);
        expect(event.id.slice(4, 14)).toBe(timePart);
      }
    },
  );

  it('never gives two SES events the same id', () => {
    const ids = names
      .filter((n) => !['subscription', 'send', 'send-untagged'].includes(n))
      .flatMap((n) => mapped(n).map((e) => e.id));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('Send, Delivery, DeliveryDelay', () => {
  it('Send is skipped: email.sent is the send worker’s own (one still on its way after the change is not told twice)', () => {
    expect(mapSesEvent(fixture('send').detail)).toEqual({ kind: 'skipped', why: SEND_IS_THE_WORKERS });
  });

  it('Delivery → email.delivered with the remote MTA answer as smtp_response', () => {
    expect(view(mapped('delivery'))).toEqual([
      {
        type: 'email.delivered',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:00:01.874Z',
        data: { ...COMMON, smtp_response: '250 2.0.0 OK  1763805601 a1b2c3d4e5f6g.12 - gsmtp' },
      },
    ]);
  });

  it('Delivery to two recipients → one email.delivered each', () => {
    expect(mapped('delivery-two-recipients').map((e) => [e.type, e.to])).toEqual([
      ['email.delivered', 'bob@example.com'],
      ['email.delivered', 'carol@example.org'],
    ]);
  });

  it('DeliveryDelay → email.delivery_delayed with the delay type, expiry and diagnostic', () => {
    expect(view(mapped('delivery-delay'))).toEqual([
      {
        type: 'email.delivery_delayed',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:15:03.512Z',
        data: {
          ...COMMON,
          delay_type: 'TransientCommunicationFailure',
          expires_at: '2026-11-22T22:00:00.000Z',
          diagnostic_code: 'smtp; 421 4.4.1 Unable to connect to remote host',
        },
      },
    ]);
  });
});

describe('Bounce', () => {
  it.each([
    ['bounce-undetermined', 'Undetermined', 'Undetermined', undefined],
    ['bounce-permanent-general', 'Permanent', 'General', 'smtp; 550 5.1.1 user unknown'],
    [
      'bounce-permanent-noemail',
      'Permanent',
      'NoEmail',
      'smtp; 550 5.1.1 The email account that you tried to reach does not exist.',
    ],
    ['bounce-permanent-suppressed', 'Permanent', 'Suppressed', expect.stringContaining('has suppressed sending')],
    ['bounce-transient-general', 'Transient', 'General', expect.stringContaining('451 4.3.0')],
    ['bounce-transient-mailboxfull', 'Transient', 'MailboxFull', expect.stringContaining('552 5.2.2')],
    ['bounce-transient-messagetoolarge', 'Transient', 'MessageTooLarge', expect.stringContaining('552 5.3.4')],
    ['bounce-transient-contentrejected', 'Transient', 'ContentRejected', expect.stringContaining('554 5.7.1')],
    ['bounce-transient-attachmentrejected', 'Transient', 'AttachmentRejected', expect.stringContaining('554 5.6.1')],
  ])('%s → email.bounced %s/%s, not refused by the account list, nothing else', (name, type, subType, diagnostic) => {
    expect(view(mapped(name))).toEqual([
      {
        type: 'email.bounced',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:00:02.231Z',
        data: {
          ...COMMON,
          bounce_type: type,
          bounce_sub_type: subType,
          refused_by_account_suppression_list: false,
          ...(diagnostic ? { diagnostic_code: diagnostic } : {}),
        },
      },
    ]);
  });

  it('Permanent/Suppressed (the global list) is not the account list', () => {
    expect(mapped('bounce-permanent-suppressed')[0]?.data.refused_by_account_suppression_list).toBe(false);
  });

  it('Permanent/OnAccountSuppressionList → email.bounced refused_by_account_suppression_list, and email.failed', () => {
    expect(view(mapped('bounce-permanent-onaccountsuppressionlist'))).toEqual([
      {
        type: 'email.bounced',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:00:02.231Z',
        data: {
          ...COMMON,
          bounce_type: 'Permanent',
          bounce_sub_type: 'OnAccountSuppressionList',
          refused_by_account_suppression_list: true,
          diagnostic_code: expect.stringContaining('on the suppression list for your account'),
        },
      },
      {
        type: 'email.failed',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:00:02.231Z',
        data: { ...COMMON, reason: 'suppressed_by_provider' },
      },
    ]);
  });
});

describe('Complaint', () => {
  it('→ email.complained with the feedback type', () => {
    expect(view(mapped('complaint'))).toEqual([
      {
        type: 'email.complained',
        to: 'bob@example.com',
        timestamp: '2026-11-22T11:42:10.000Z',
        data: { ...COMMON, feedback_type: 'abuse' },
      },
    ]);
  });

  it('with sub-type OnAccountSuppressionList (accepted, never sent) → email.complained and email.failed', () => {
    expect(view(mapped('complaint-onaccountsuppressionlist'))).toEqual([
      {
        type: 'email.complained',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:00:01.100Z',
        data: { ...COMMON, complaint_sub_type: 'OnAccountSuppressionList' },
      },
      {
        type: 'email.failed',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:00:01.100Z',
        data: { ...COMMON, reason: 'suppressed_by_provider' },
      },
    ]);
  });
});

describe('Open, Click, Reject, Rendering Failure', () => {
  it('Open → email.opened with the opener IP and user agent', () => {
    expect(view(mapped('open'))).toEqual([
      {
        type: 'email.opened',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:05:12.006Z',
        data: {
          ...COMMON,
          ip_address: '203.0.113.44',
          user_agent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
        },
      },
    ]);
  });

  it('Click → email.clicked with the link, IP, user agent and link tags', () => {
    expect(view(mapped('click'))).toEqual([
      {
        type: 'email.clicked',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:06:30.717Z',
        data: {
          ...COMMON,
          link: 'https://acme.example/invoices/2026-11',
          ip_address: '203.0.113.44',
          user_agent: expect.stringContaining('Safari'),
          link_tags: { samplekey0: ['samplevalue0'] },
        },
      },
    ]);
  });

  it('Reject (a virus) → email.failed with SES reason', () => {
    expect(view(mapped('reject'))).toEqual([
      {
        type: 'email.failed',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:00:00.000Z',
        data: { ...COMMON, reason: 'Bad content' },
      },
    ]);
  });

  it('Rendering Failure → email.failed with the error and template', () => {
    expect(view(mapped('rendering-failure'))).toEqual([
      {
        type: 'email.failed',
        to: 'bob@example.com',
        timestamp: '2026-11-22T10:00:00.000Z',
        data: {
          ...COMMON,
          reason: "Attribute 'attributeName' is not present in the rendering data.",
          template: 'MyTemplate',
        },
      },
    ]);
  });
});

describe('correlation and identity', () => {
  it('takes email, account and mode from the message tags (a test-mode tag gives a test-mode event)', () => {
    const detail = fixture('delivery').detail;
    detail.mail.tags = { ...detail.mail.tags, mode: ['test'], email_id: ['email_other'], account_id: ['acct_other'] };
    const result = mapSesEvent(detail);
    expect(result.kind === 'events' && result.events[0]).toMatchObject({
      emailId: 'email_other',
      accountId: 'acct_other',
      mode: 'test',
    });
  });

  it("carries a traced email's trace tag to its events (traces: docs/webhooks.md#traces); a malformed one is ignored", () => {
    const trace = compactTrace({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: 1 });
    const detail = fixture('delivery').detail;
    detail.mail.tags = { ...detail.mail.tags, trace: [trace] };
    const traced = mapSesEvent(detail);
    expect(traced.kind === 'events' && traced.events.map((e) => e.trace)).toEqual([trace]);
    expect(traced.kind === 'events' && eventMessage.parse(traced.events[0]).trace).toBe(trace);
    detail.mail.tags = { ...detail.mail.tags, trace: ['not-a-trace'] };
    const bad = mapSesEvent(detail);
    expect(bad.kind === 'events' && bad.events[0]?.trace).toBeUndefined();
  });

  it.each([
    ['no Sendflow tags', { 'ses:operation': ['SendEmail'] }],
    ['a mode that is not ours', { email_id: [EMAIL_ID], account_id: [ACCOUNT_ID], mode: ['staging'] }],
  ])('skips an event with %s (not one of our emails)', (_name, tags) => {
    const detail = fixture('send').detail;
    detail.mail.tags = tags;
    expect(mapSesEvent(detail)).toEqual({ kind: 'skipped', why: expect.stringContaining('no Sendflow tags') });
  });

  it('skips Subscription and event types SES may add later', () => {
    expect(mapSesEvent(fixture('subscription').detail)).toMatchObject({ kind: 'skipped' });
    expect(mapSesEvent({ ...fixture('send').detail, eventType: 'Something New' })).toMatchObject({ kind: 'skipped' });
  });

  it('throws on a known event type with a malformed body, so it is retried and dead-lettered, not lost', () => {
    const detail = fixture('bounce-permanent-general').detail;
    delete (detail.bounce as Record<string, unknown>).bouncedRecipients;
    expect(() => mapSesEvent(detail)).toThrow();
  });

  it('gives a redelivered SES event (new EventBridge id) the same event ids', () => {
    const envelope = fixture('delivery');
    const redelivered = { ...envelope, id: 'another-eventbridge-id', time: '2026-11-22T10:09:00Z' };
    expect(mapSesEvent(redelivered.detail)).toEqual(mapSesEvent(envelope.detail));
  });

  it('gives the same message different ids per event type, recipient and time', () => {
    const delivered = fixture('delivery').detail;
    const ids = (detail: Envelope['detail']) => {
      const result = mapSesEvent(detail);
      return result.kind === 'events' ? result.events.map((e) => e.id) : [];
    };
    const [base] = ids(delivered);
    const later = structuredClone(delivered);
    (later.delivery as { timestamp: string }).timestamp = '2026-11-22T10:00:01.875Z';
    const other = structuredClone(delivered);
    (other.delivery as { recipients: string[] }).recipients = ['carol@example.org'];
    expect(ids(later)[0]).not.toBe(base);
    expect(ids(other)[0]).not.toBe(base);
  });

  it('decodes RFC 2047 encoded words in the reported From and Subject', () => {
    const detail = fixture('delivery').detail;
    (detail.mail as unknown as { commonHeaders: Record<string, unknown> }).commonHeaders = {
      from: ['=?UTF-8?B?Wm/Dqw==?= <zoe@acme.example>'],
      subject: '=?UTF-8?Q?Caf=C3=A9_au_lait?= =?UTF-8?B?IOKckw==?=',
    };
    const result = mapSesEvent(detail);
    expect(result.kind === 'events' && result.events[0]?.data).toMatchObject({
      from: 'Zoë <zoe@acme.example>',
      subject: 'Café au lait ✓',
    });
  });
});

describe('provider-events queue handler', () => {
  /** The mapped events processed where they arrive (the runtime wires processEvents: history, fan-out). */
  function harness(options: { fail?: (event: SendflowEvent) => boolean; throws?: boolean } = {}) {
    const calls: SendflowEvent[][] = [];
    const warnings: unknown[] = [];
    const handler = createSesEventsHandler({
      processEvents: async (events) => {
        if (options.throws) throw new Error('DynamoDB unavailable');
        calls.push([...events]);
        return events.filter((event) => options.fail?.(event) ?? false);
      },
      logger: { debug: () => undefined, warn: (...args: unknown[]) => void warnings.push(args) },
    });
    return { handler, calls, warnings };
  }

  function sqsEvent(bodies: string[]): SQSEvent {
    return {
      Records: bodies.map((body, i) => ({
        messageId: `msg-${i}`,
        receiptHandle: `rh-${i}`,
        body,
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: '0',
          SenderId: 'events.amazonaws.com',
          ApproximateFirstReceiveTimestamp: '0',
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:provider-events',
        awsRegion: 'eu-west-1',
      })),
    };
  }

  it('processes the mapped events of the whole batch together, where they arrive (no events queue)', async () => {
    // Arrange
    const { handler, calls } = harness();
    const bodies = ['delivery', 'bounce-permanent-onaccountsuppressionlist'].map((n) => JSON.stringify(fixture(n)));

    // Act
    const result = await handler(sqsEvent(bodies));

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    expect(calls.map((events) => events.map((e) => e.type))).toEqual([
      ['email.delivered', 'email.bounced', 'email.failed'],
    ]);
  });

  it('acknowledges skipped events (Send among them) with a warning, and fails only the malformed record', async () => {
    // Arrange
    const { handler, calls, warnings } = harness();
    const bodies = [
      JSON.stringify(fixture('send-untagged')),
      JSON.stringify(fixture('subscription')),
      '{"not":"an EventBridge event"}',
      JSON.stringify({ ...fixture('send'), source: 'aws.s3' }),
      'not json',
      JSON.stringify(fixture('send')),
    ];

    // Act
    const result = await handler(sqsEvent(bodies));

    // Assert
    expect(result).toEqual({
      batchItemFailures: [{ itemIdentifier: 'msg-2' }, { itemIdentifier: 'msg-3' }, { itemIdentifier: 'msg-4' }],
    });
    expect(calls.flat()).toEqual([]);
    expect(warnings).toHaveLength(3);
  });

  it('fails only the records whose events were not all processed, so SQS retries those', async () => {
    // Arrange
    const { handler } = harness({ fail: (event) => event.type === 'email.failed' });
    const bodies = ['delivery', 'bounce-permanent-onaccountsuppressionlist'].map((n) => JSON.stringify(fixture(n)));

    // Act
    const result = await handler(sqsEvent(bodies));

    // Assert
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'msg-1' }] });
  });

  it('fails every record when processing throws, so SQS retries them', async () => {
    const { handler } = harness({ throws: true });
    const result = await handler(sqsEvent([JSON.stringify(fixture('delivery'))]));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'msg-0' }] });
  });
});
