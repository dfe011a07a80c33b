// What a received email says about its own completeness, in the API's responses and in email.received alike:
// `status`, `notes` (why it is partial or failed) and `omitted` (how many entries each list lost). One schema for
// both, so the event and the API cannot drift apart.
import * as z from 'zod';

const count = z.number().int().min(1);

export const receivedStatusFields = {
  status: z.enum(['received', 'partial', 'failed']).meta({
    description:
      '`received`: parsed and listed whole. `partial`: stored, but something is only in the raw message (a limit ' +
      'was reached, the body was not parsed, a list was cut): see `notes`. `failed`: it arrived but could not be ' +
      'stored; only its envelope is listed.',
  }),
  notes: z
    .array(
      z.strictObject({
        code: z.enum(['mime_limit', 'parse_timeout', 'parse_failed', 'fields_cut', 'headers_cut', 'storage_failed']),
        message: z.string(),
      }),
    )
    .meta({ description: 'Why the email is partial or failed, one note per cause; empty when received whole.' }),
  omitted: z
    .strictObject({
      to: count.optional(),
      cc: count.optional(),
      bcc: count.optional(),
      reply_to: count.optional(),
      received_for: count.optional(),
      attachments: count.optional(),
    })
    .meta({ description: 'Entries left out of each list that was cut (the raw message has them all); {} when none.' }),
};
