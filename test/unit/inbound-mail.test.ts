// The inbound function's handler: SES's Lambda-action event (test/fixtures/ses-receiving/inbound-lambda-action.json, the
// shape SES sends) is checked with zod, the message SES stored is read by its messageId, and `receive` gets the
// envelope, the verdicts in lower case, the receipt time and the messageId as the arrival's id. A failure is
// thrown, so Lambda's async retries and the on-failure destination keep the message.
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { RawMessageSource } from '../../lambdas/app/inbound/raw-messages';
import type { InboundMessage } from '../../lambdas/app/inbound/receive-email';
import { createInboundMailHandler } from '../../lambdas/handlers/queue/inbound-mail';

const FIXTURE = JSON.parse(
  readFileSync(new URL('../fixtures/ses-receiving/inbound-lambda-action.json', import.meta.url), 'utf8'),
) as { Records: [{ ses: { mail: Record<string, unknown>; receipt: Record<string, unknown> } }] };
const RAW = new TextEncoder().encode('From: Ada <ada@sender.example>\r\nSubject: Invoice 1842 attached\r\n\r\nHi\r\n');

/** The fixture with `change` applied to a deep copy of its one record. */
function eventWith(change: (record: (typeof FIXTURE)['Records'][0]) => void = () => {}) {
  const event = structuredClone(FIXTURE);
  change(event.Records[0]);
  return event;
}

describe('inbound mail handler', () => {
  let received: InboundMessage[];
  let reads: string[];
  let discarded: string[];
  let source: RawMessageSource;
  const logger = { info: vi.fn(), warn: vi.fn() };

  beforeEach(() => {
    received = [];
    reads = [];
    discarded = [];
    source = {
      read: async (id) => {
        reads.push(id);
        return RAW;
      },
      discard: async (id) => {
        discarded.push(id);
      },
    };
  });

  /** receiveEmail's outcome for a message one account received at its domain. */
  const storedOne = {
    stored: [{ accountId: 'acct_1', emailId: 'rcv_1', created: true, status: 'partial' }],
    dropped: [] as string[],
  };
  const handler = (
    receive: (message: InboundMessage) => Promise<{ stored: readonly { status: string }[] }> = async (message) => {
      received.push(message);
      return storedOne;
    },
  ) => createInboundMailHandler({ source, receive, logger });

  it('hands receive the stored message, the envelope, the lower-cased verdicts, the receipt time and the messageId', async () => {
    // Act
    await handler()(FIXTURE);

    // Assert
    expect(reads).toEqual(['o3vrnil0e2ic28trm7dfhrc2v0cnbeccl4nbp0g1']);
    expect(received).toEqual([
      {
        raw: RAW,
        mailFrom: 'prvs=144d0cba7=ada@sender.example',
        // receipt.recipients (this rule's envelope recipients), the domain lower-cased, the local part kept.
        recipients: ['support@acme.example', 'billing@acme.example'],
        verdicts: { spam: 'pass', virus: 'pass', spf: 'pass', dkim: 'gray', dmarc: 'fail' },
        receivedAt: '2026-11-26T07:41:02.028Z',
        sourceId: 'o3vrnil0e2ic28trm7dfhrc2v0cnbeccl4nbp0g1',
      },
    ]);
  });

  it('takes the recipients from the receipt, not from mail.destination (which may name other rules’ addresses)', async () => {
    // Arrange
    const event = eventWith((r) => {
      r.ses.receipt.recipients = ['Support@ACME.example'];
    });

    // Act
    await handler()(event);

    // Assert
    expect(received[0]?.recipients).toEqual(['Support@acme.example']);
  });

  it('passes a bounce’s empty MAIL FROM (SES may write it as <>) as the empty string', async () => {
    // Arrange
    const events = ['', '<>'].map((source) =>
      eventWith((r) => {
        r.ses.mail.source = source;
      }),
    );

    // Act
    for (const event of events) await handler()(event);

    // Assert
    expect(received.map((m) => m.mailFrom)).toEqual(['', '']);
  });

  it('reads PROCESSING_FAILED as processing_failed, and a check SES did not run (DISABLED, or absent) as gray', async () => {
    // Arrange
    const event = eventWith((r) => {
      r.ses.receipt.spamVerdict = { status: 'PROCESSING_FAILED' };
      r.ses.receipt.virusVerdict = { status: 'DISABLED' };
      delete r.ses.receipt.dmarcVerdict;
    });

    // Act
    await handler()(event);

    // Assert
    expect(received[0]?.verdicts).toEqual({
      spam: 'processing_failed',
      virus: 'gray',
      spf: 'pass',
      dkim: 'gray',
      dmarc: 'gray',
    });
  });

  it.each([
    ['no records', { Records: [] }],
    ['not an SES record', eventWith((r) => Object.assign(r, { eventSource: 'aws:sqs' }))],
    ['a messageId that is no SES id', eventWith((r) => Object.assign(r.ses.mail, { messageId: '../../etc' }))],
    ['an unknown verdict', eventWith((r) => Object.assign(r.ses.receipt, { spamVerdict: { status: 'MAYBE' } }))],
    ['no recipients', eventWith((r) => Object.assign(r.ses.receipt, { recipients: [] }))],
    ['a receipt time that is no time', eventWith((r) => Object.assign(r.ses.receipt, { timestamp: 'yesterday' }))],
  ])('refuses an event with %s before reading anything', async (_, event) => {
    // Act & Assert
    await expect(handler()(event)).rejects.toThrow();
    expect(reads).toEqual([]);
    expect(received).toEqual([]);
  });

  it('throws when receive fails, so Lambda retries the event and then dead-letters it', async () => {
    // Arrange
    const failing = async () => {
      throw new Error('table unavailable');
    };

    // Act & Assert
    await expect(handler(failing)(FIXTURE)).rejects.toThrow('table unavailable');
  });

  it('logs the arrival by its id and counts, never the addresses or the subject', async () => {
    // Act
    await handler()(FIXTURE);

    // Assert
    const logged = JSON.stringify(logger.info.mock.calls);
    expect(logged).toContain('o3vrnil0e2ic28trm7dfhrc2v0cnbeccl4nbp0g1');
    expect(logged).toContain('"stored":1,"partial":1');
    expect(logged).not.toMatch(/acme\.example|sender\.example|Invoice/);
  });

  it('deletes the stored arrival when receive kept nothing of it (every recipient dropped): no one receives it', async () => {
    // Arrange
    const droppedAll = async () => ({ stored: [], dropped: ['support@acme.example', 'billing@acme.example'] });

    // Act
    await handler(droppedAll)(FIXTURE);

    // Assert
    expect(discarded).toEqual(['o3vrnil0e2ic28trm7dfhrc2v0cnbeccl4nbp0g1']);
    expect(JSON.stringify(logger.info.mock.calls)).toContain('"discarded":true');
  });

  it('keeps the stored arrival when receive stored it for an account (replays and duplicate invocations read it)', async () => {
    // Act
    await handler()(FIXTURE);

    // Assert
    expect(discarded).toEqual([]);
  });

  it('keeps the stored arrival when receive fails, so the retries and a replay can read it', async () => {
    // Arrange
    const failing = async () => {
      throw new Error('table unavailable');
    };

    // Act & Assert
    await expect(handler(failing)(FIXTURE)).rejects.toThrow('table unavailable');
    expect(discarded).toEqual([]);
  });
});
