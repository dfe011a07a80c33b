// An email's tags on the events SES reports (issue 32 item 1, on AWS): the send worker passes them as SES message
// tags (`t-<name>`, marked `tags: inline`) when they fit SES's limits, and the SES mapper rebuilds each event's
// `tags` from the record's mail.tags, so a webhook filter on a tag matches delivered, bounced, opened... events
// as it does locally. Tags that do not fit (marked `stored`, and emails sent before the mark) are read from the
// stored email, of the event's own account only. Routing tags (email, account, mode, template) and SES's own
// `ses:*` tags never become the customer's.
import { readFileSync } from 'node:fs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { mapSesEvent } from '../../lambdas/adapters/ses/map-ses-event';
import { createSesEventsHandler } from '../../lambdas/adapters/ses/ses-events-handler';
import { sendEmailRequest } from '../../lambdas/adapters/ses/ses-provider';
import type { EmailRecord, OutgoingCopy } from '../../lambdas/app/emails/ports';
import type { EmailMessage } from '../../lambdas/domain/email/email';
import { type SendflowEvent, tagMap } from '../../lambdas/domain/events';
import { evaluateFilter, filterInput } from '../../lambdas/domain/webhooks/filter';

const FIXTURES = new URL('../fixtures/ses/', import.meta.url);
const EMAIL_ID = 'email_01jdxk3m7q8r9s0t1v2w3x4y5z';
const ACCOUNT_ID = 'acct_01jd5e6f7g8h9j0k1m2n3p4q5r';

const email: EmailMessage = {
  id: EMAIL_ID,
  accountId: ACCOUNT_ID,
  mode: 'live',
  from: 'Acme Billing <billing@acme.example>',
  to: ['bob@example.com'],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: 'Your November invoice',
  html: '<p>Hi</p>',
  headers: {},
  tags: [
    { name: 'plan', value: 'pro' },
    { name: 'cohort', value: '2026-11' },
    // Named like a routing tag: still the customer's, and the routing tag is untouched.
    { name: 'account_id', value: 'acct_someone_else' },
  ],
  createdAt: '2026-11-22T09:59:59.000Z',
};

interface Envelope {
  id: string;
  detail: { eventType: string; mail: { messageId: string; tags: Record<string, string[]> } };
}

/** An SES fixture whose mail.tags are what SES reports for this SendEmail: its SES auto tags plus our EmailTags. */
function reported(fixture: string, sent: EmailMessage): Envelope {
  const envelope = JSON.parse(readFileSync(new URL(`${fixture}.json`, FIXTURES), 'utf8')) as Envelope;
  const request = sendEmailRequest(sent, { to: 'bob@example.com', headers: {} } as OutgoingCopy, 'SendflowApi-events');
  const sesOwn = Object.entries(envelope.detail.mail.tags).filter(([name]) => name.startsWith('ses:'));
  envelope.detail.mail.tags = Object.fromEntries([
    ...sesOwn,
    ...(request.EmailTags ?? []).map((t) => [t.Name as string, [t.Value as string]]),
  ]);
  return envelope;
}

function eventsOf(envelope: Envelope): SendflowEvent[] {
  const mapping = mapSesEvent(envelope.detail);
  if (mapping.kind !== 'events') throw new Error(mapping.why);
  return mapping.events;
}

const matches = (filter: unknown, event: SendflowEvent) => evaluateFilter(filter, filterInput(event)).matches;

describe('the SES mapper rebuilds the email’s tags from mail.tags', () => {
  it.each(['delivery', 'bounce-permanent-general', 'complaint', 'open', 'click', 'delivery-delay'])(
    '%s: every event’s tags equal the email’s, and a filter on a tag matches it',
    (fixture) => {
      const events = eventsOf(reported(fixture, email));

      expect(events.length).toBeGreaterThan(0);
      for (const event of events) {
        expect(event.tags).toEqual(tagMap(email.tags));
        expect(event.accountId).toBe(ACCOUNT_ID);
        expect(matches({ tags: { plan: 'pro' } }, event)).toBe(true);
        expect(matches({ tags: { plan: { $in: ['free', 'starter'] } } }, event)).toBe(false);
        expect(matches({ tags: { cohort: '2026-11' }, data: { subject: 'Your November invoice' } }, event)).toBe(true);
      }
    },
  );

  it('keeps routing tags and SES’s own out of the customer’s tags; an email without tags has none', () => {
    const [event] = eventsOf(reported('delivery', { ...email, templateId: 'tmpl_1' }));
    expect(Object.keys(event?.tags ?? {}).sort()).toEqual(['account_id', 'cohort', 'plan']);
    expect(event?.data.template_id).toBe('tmpl_1');

    const [untagged] = eventsOf(reported('delivery', { ...email, tags: [] }));
    expect(untagged?.tags).toBeUndefined();
    expect(matches({ tags: { plan: 'pro' } }, untagged as SendflowEvent)).toBe(false);
  });
});

describe('tags that do not fit SES are read from the stored email', () => {
  /** Every tag the API accepts at its limits: 50 of them, names and values of 256 characters. */
  const widest: EmailMessage = {
    ...email,
    tags: Array.from({ length: 50 }, (_, i) => ({
      name: `${i}`.padStart(256, 'n'),
      value: i === 0 ? 'pro' : `${i}`.padStart(256, 'v'),
    })),
  };

  function sqsEvent(envelopes: Envelope[]): SQSEvent {
    return {
      Records: envelopes.map((envelope, i) => ({
        messageId: `msg-${i}`,
        receiptHandle: `rh-${i}`,
        body: JSON.stringify(envelope),
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

  function harness(stored: readonly EmailRecord[]) {
    const processed: SendflowEvent[] = [];
    const reads: string[] = [];
    const handler = createSesEventsHandler({
      processEvents: async (events) => {
        processed.push(...events);
        return [];
      },
      emails: {
        get: async (id) => {
          reads.push(id);
          return stored.find((e) => e.id === id) ?? null;
        },
      },
      logger: { debug: () => undefined, warn: () => undefined },
    });
    return { handler, processed, reads };
  }

  it('gives a widest-tagged email’s events its tags, one read per email of the batch', async () => {
    const { handler, processed, reads } = harness([widest as EmailRecord]);

    const result = await handler(sqsEvent([reported('delivery', widest), reported('open', widest)]));

    expect(result.batchItemFailures).toEqual([]);
    expect(processed.length).toBe(2);
    for (const event of processed) {
      expect(event.tags).toEqual(tagMap(widest.tags));
      expect(matches({ tags: { [`${0}`.padStart(256, 'n')]: 'pro' } }, event)).toBe(true);
    }
    expect(reads).toEqual([EMAIL_ID]);
  });

  it('reads no email when the tags came with the event', async () => {
    const { handler, processed, reads } = harness([email as EmailRecord]);

    await handler(sqsEvent([reported('delivery', email)]));

    expect(processed[0]?.tags).toEqual(tagMap(email.tags));
    expect(reads).toEqual([]);
  });

  it('reads the stored email for an event sent before tags rode along (no mark)', async () => {
    const { handler, processed } = harness([email as EmailRecord]);
    const legacy = reported('delivery', email);
    legacy.detail.mail.tags = Object.fromEntries(
      Object.entries(legacy.detail.mail.tags).filter(([name]) => name !== 'tags' && !name.startsWith('t-')),
    );

    await handler(sqsEvent([legacy]));

    expect(processed[0]?.tags).toEqual(tagMap(email.tags));
  });

  it('never takes tags from another account’s email under that id, nor from an email gone past retention', async () => {
    const someoneElses = { ...widest, accountId: 'acct_other' } as EmailRecord;
    const other = harness([someoneElses]);
    await other.handler(sqsEvent([reported('delivery', widest)]));
    expect(other.processed[0]?.tags).toBeUndefined();

    const gone = harness([]);
    const result = await gone.handler(sqsEvent([reported('delivery', widest)]));
    expect(result.batchItemFailures).toEqual([]);
    expect(gone.processed[0]?.tags).toBeUndefined();
  });

  it('retries the record (SQS) when the email cannot be read', async () => {
    const processed: SendflowEvent[] = [];
    const handler = createSesEventsHandler({
      processEvents: async (events) => {
        processed.push(...events);
        return [];
      },
      emails: { get: async () => Promise.reject(new Error('DynamoDB unavailable')) },
      logger: { debug: () => undefined, warn: () => undefined },
    });

    const result = await handler(sqsEvent([reported('delivery', widest), reported('delivery', email)]));

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'msg-0' }]);
    expect(processed.map((e) => e.tags)).toEqual([tagMap(email.tags)]);
  });
});
