// Unit tests of fitReceivedFields (lambdas/domain/received-fields.ts): whatever a message holds, a received
// email's listed fields fit the byte budget; every list keeps its first entries, every entry left out is counted,
// and an email that fits is left as it is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_RECEIVED_FIELDS_BYTES } from '../../lambdas/domain/inbound';
import { fitReceivedFields, jsonBytes, type ListedAttachment, omittedOf } from '../../lambdas/domain/received-fields';

type Attachment = ListedAttachment & { readonly id: string };
const LISTS = ['to', 'cc', 'bcc', 'replyTo', 'receivedFor', 'attachments'] as const;

// Any characters, control characters and astral ones included (JSON escapes the first, UTF-8 doubles the second).
const text = (maxLength: number) =>
  fc.string({
    maxLength,
    unit: fc.oneof(fc.constantFrom('a', '\u0001', '"', 'é', '😀', '\\'), fc.string({ minLength: 1, maxLength: 1 })),
  });
const fields = fc.record({
  from: text(2_000),
  subject: text(2_000),
  messageId: text(2_000),
  to: fc.array(text(1_200), { maxLength: 150 }),
  cc: fc.array(text(1_200), { maxLength: 150 }),
  bcc: fc.array(text(400), { maxLength: 30 }),
  replyTo: fc.array(text(400), { maxLength: 30 }),
  receivedFor: fc.array(text(400), { maxLength: 120 }),
  attachments: fc.array(
    fc.record({ id: fc.string({ maxLength: 30 }), filename: fc.option(text(600)), contentId: fc.option(text(600)) }),
    { maxLength: 130 },
  ),
});

describe('fitReceivedFields', () => {
  it('always fits the budget, keeps each list’s first entries, and counts every entry left out', () => {
    fc.assert(
      fc.property(fields, (input) => {
        const { fields: fitted, omitted } = fitReceivedFields<Attachment>(input);

        expect(jsonBytes(fitted)).toBeLessThanOrEqual(MAX_RECEIVED_FIELDS_BYTES);
        for (const list of LISTS) {
          expect(fitted[list].length + (omitted[list] ?? 0)).toBe(input[list].length);
        }
        fitted.to.forEach((address, i) => {
          expect(input.to[i]?.replaceAll('\0', '').startsWith(address)).toBe(true);
        });
        fitted.attachments.forEach((attachment, i) => {
          expect(attachment.id).toBe(input.attachments[i]?.id);
        });
      }),
      { numRuns: 60 },
    );
  });

  it('an email that fits is left whole, nothing omitted', () => {
    const input = {
      from: 'Ada <ada@example.com>',
      subject: 'Hi',
      messageId: '<m@x>',
      to: ['a@x.example', 'b@x.example'],
      cc: [],
      bcc: [],
      replyTo: [],
      receivedFor: ['a@x.example'],
      attachments: [{ id: 'att_1', filename: 'r.pdf', contentId: null }],
    };

    expect(fitReceivedFields(input)).toEqual({ fields: input, omitted: {} });
  });

  it('the longest list is cut first; counts are shown with the API’s names', () => {
    const input = {
      from: 'a@x',
      subject: '',
      messageId: '',
      to: Array.from({ length: 100 }, (_, i) => `${i}${'t'.repeat(300)}@x`),
      cc: ['c@x'],
      bcc: [],
      replyTo: Array.from({ length: 3 }, (_, i) => `${i}@r`),
      receivedFor: Array.from({ length: 100 }, (_, i) => `${i}${'r'.repeat(20)}@x`),
      attachments: [],
    };

    const { fields: fitted, omitted } = fitReceivedFields(input, 8_000);

    expect(fitted.cc).toEqual(['c@x']);
    expect(fitted.replyTo).toHaveLength(3);
    expect(omitted.to).toBeGreaterThan(70);
    expect(omittedOf({ omitted: { replyTo: 2, receivedFor: 1, to: 3 } })).toEqual({
      reply_to: 2,
      received_for: 1,
      to: 3,
    });
  });
});
