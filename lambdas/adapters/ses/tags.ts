// The SES message tags Sendflow puts on every SendEmail: SES copies them into each event's mail.tags, which
// is how an SES event finds its way back to our email, account and mode, and to the email's own tags (webhook
// filters match on them: issue 32).
import { tagMap } from '../../domain/events';

export const SES_TAGS = {
  emailId: 'email_id',
  accountId: 'account_id',
  mode: 'mode',
  /** Only on emails sent by template: its id comes back on every SES event as `template_id`. */
  templateId: 'template_id',
  /**
   * Only on traced emails: the trace context's ids (domain/trace-context.ts's compact form without a tracestate,
   * which SES tag values cannot hold), so SES's events join the trace of the request that sent the email.
   */
  trace: 'trace',
  /**
   * Where the email's own tags are: `inline` (each one as `t-<name>` beside this one: all fit), `stored` (they do
   * not fit SES's limits: the SES mapper reads them from the stored email). Absent on emails sent before it was
   * carried: read from the stored email too.
   */
  customerTags: 'tags',
} as const;

/** Before each of the email's own tag names: they never collide with a routing tag or SES's `ses:…`. */
export const CUSTOMER_TAG_PREFIX = 't-';

/** SES's limits on a SendEmail's tags: at most 50, names and values of [A-Za-z0-9_-] up to 256 characters. */
export const SES_MAX_TAGS = 50;
const SES_TAG_TEXT = /^[A-Za-z0-9_-]{1,256}$/;

export type CustomerTagsMark = 'inline' | 'stored';

/**
 * The email's own tags as SES message tags, next to `routing` (the routing tags, the mark excluded): each name
 * once with its last value (as the events' `tags`), `t-` before it. All of them or none: when one would break
 * SES's rules (a name of 255 or 256 characters, with the prefix) or they would make more than 50 tags with the
 * routing tags and the mark, none goes and the mark says `stored`.
 */
export function customerSesTags(
  tags: readonly { readonly name: string; readonly value: string }[],
  routing: number,
): { readonly mark: CustomerTagsMark; readonly tags: readonly { Name: string; Value: string }[] } {
  const named = Object.entries(tagMap(tags)).map(([name, value]) => ({
    Name: `${CUSTOMER_TAG_PREFIX}${name}`,
    Value: value,
  }));
  const fits =
    routing + 1 + named.length <= SES_MAX_TAGS &&
    named.every((tag) => SES_TAG_TEXT.test(tag.Name) && SES_TAG_TEXT.test(tag.Value));
  return fits ? { mark: 'inline', tags: named } : { mark: 'stored', tags: [] };
}

/**
 * The email's own tags from an SES event's mail.tags (`{name: [value]}`): `inline`, rebuilt from the `t-` tags
 * (undefined when it has none, as an untagged email's events); otherwise `stored`: the stored email has them.
 */
export function customerTagsOf(
  mailTags: Readonly<Record<string, readonly string[]>> | undefined,
): { readonly mark: 'inline'; readonly tags?: Record<string, string> } | { readonly mark: 'stored' } {
  if (mailTags?.[SES_TAGS.customerTags]?.[0] !== 'inline') return { mark: 'stored' };
  const pairs = Object.entries(mailTags)
    .filter(([name, values]) => name.startsWith(CUSTOMER_TAG_PREFIX) && typeof values[0] === 'string')
    .map(([name, values]) => ({ name: name.slice(CUSTOMER_TAG_PREFIX.length), value: values[0] as string }));
  return pairs.length ? { mark: 'inline', tags: tagMap(pairs) } : { mark: 'inline' };
}
