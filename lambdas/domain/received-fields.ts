// A received email's listed fields, bounded by construction: whatever the message holds, the fields stored on its
// item (and copied into its email.received event) fit a byte budget. Every string is first cut to its own limit
// and every list to its count; then, while the fields are over the budget, the list taking the most bytes (an
// address list, the envelope recipients or the attachments) loses its last entry, so the longest lists are cut
// first and evenly, each loss counted in `omitted` (the raw message keeps them all).
// Pure: the use case decides what is stored, this only decides how much of it is listed.
import {
  bounded,
  MAX_ADDRESS_CHARS,
  MAX_FILENAME_CHARS,
  MAX_INBOUND_ATTACHMENTS,
  MAX_LISTED_ADDRESSES,
  MAX_RECEIVED_FIELDS_BYTES,
} from './inbound';

export const ADDRESS_LISTS = ['to', 'cc', 'bcc', 'replyTo'] as const;
export type AddressList = (typeof ADDRESS_LISTS)[number];
export type ListName = AddressList | 'receivedFor' | 'attachments';

/** How many entries of each list were left out (only lists that lost some). */
export type Omitted = Partial<Record<ListName, number>>;

/** The listed part of an attachment (what is measured: the item keeps these, and its file's key). */
export interface ListedAttachment {
  readonly filename: string | null;
  readonly contentId: string | null;
}

export interface ListedFields<A extends ListedAttachment> {
  readonly from: string;
  readonly subject: string;
  readonly messageId: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly replyTo: readonly string[];
  readonly receivedFor: readonly string[];
  readonly attachments: readonly A[];
}

/**
 * The fields cut to their limits and to `maxBytes` of JSON (UTF-8) in all; `omitted` counts what was left out
 * of each list, by its count limit (100 addresses a list, 100 attachments) or by the budget.
 */
export function fitReceivedFields<A extends ListedAttachment>(
  fields: ListedFields<A>,
  maxBytes = MAX_RECEIVED_FIELDS_BYTES,
): { readonly fields: ListedFields<A>; readonly omitted: Omitted } {
  const omitted: Omitted = {};
  const cap = <T>(name: ListName, list: readonly T[], max: number): T[] => {
    if (list.length > max) omitted[name] = list.length - max;
    return list.slice(0, max);
  };
  const address = (value: string) => bounded(value, MAX_ADDRESS_CHARS);
  const lists = {
    to: cap('to', fields.to, MAX_LISTED_ADDRESSES).map(address),
    cc: cap('cc', fields.cc, MAX_LISTED_ADDRESSES).map(address),
    bcc: cap('bcc', fields.bcc, MAX_LISTED_ADDRESSES).map(address),
    replyTo: cap('replyTo', fields.replyTo, MAX_LISTED_ADDRESSES).map(address),
    receivedFor: cap('receivedFor', fields.receivedFor, MAX_LISTED_ADDRESSES).map(address),
    attachments: cap('attachments', fields.attachments, MAX_INBOUND_ATTACHMENTS).map((attachment) => ({
      ...attachment,
      filename: attachment.filename === null ? null : bounded(attachment.filename, MAX_FILENAME_CHARS),
      contentId: attachment.contentId === null ? null : bounded(attachment.contentId, 255),
    })),
  };
  const scalars = {
    from: bounded(fields.from),
    subject: bounded(fields.subject),
    messageId: bounded(fields.messageId),
  };

  // Sizes kept per list (each entry's JSON and its comma), so leaving one out is a subtraction, not a re-measure.
  const sizes = Object.fromEntries(
    Object.entries(lists).map(([name, list]) => [name, (list as unknown[]).map((entry) => jsonBytes(entry) + 1)]),
  ) as Record<ListName, number[]>;
  let total = jsonBytes({ ...scalars, ...lists });
  const drop = (name: ListName) => {
    (lists[name] as unknown[]).pop();
    total -= (sizes[name] as number[]).pop() ?? 0;
    omitted[name] = (omitted[name] ?? 0) + 1;
  };
  const totals = new Map<ListName, number>(
    (Object.keys(lists) as ListName[]).map((name) => [name, sizes[name].reduce((a, b) => a + b, 0)]),
  );
  const largest = () =>
    [...totals.entries()].reduce<ListName | null>((best, [name, bytes]) => {
      if (lists[name].length === 0) return best;
      return best === null || bytes > (totals.get(best) ?? 0) ? name : best;
    }, null);
  for (let name = largest(); total > maxBytes && name !== null; name = largest()) {
    totals.set(name, (totals.get(name) ?? 0) - (sizes[name].at(-1) ?? 0));
    drop(name);
  }
  return { fields: { ...scalars, ...lists } as ListedFields<A>, omitted };
}

/** Bytes of a value's JSON, in UTF-8 (what DynamoDB and SQS count). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/** `omitted` as the API and events show it: snake_case list names, only lists that lost entries. */
export function omittedOf(email: { readonly omitted?: Omitted | undefined }): Record<string, number> {
  const names: Partial<Record<ListName, string>> = { replyTo: 'reply_to', receivedFor: 'received_for' };
  return Object.fromEntries(
    Object.entries(email.omitted ?? {}).map(([list, count]) => [names[list as ListName] ?? list, count]),
  );
}
