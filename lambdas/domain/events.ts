// The event catalog (spec §6.1) and legacy names (spec §4.1 rule 3, §9.2), plus the standard payload (§2.3).
import type { Mode } from './api-keys';
import { bareAddress, type EmailMessage } from './email/email';
import { eventSequence } from './email/sequence';
import { timeOfId, timeOrderedId } from './ids';

export const EVENT_TYPES = [
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
  // The account's suppression list changed (Resend's events); behind the suppressionEvents stored format
  // (domain/stored-formats.ts): the release before this one refuses an event type it does not know.
  'suppression.added',
  'suppression.removed',
  // About the account's own webhooks (auto-disable): sent to its other webhooks that subscribe to them.
  'webhook.failing',
  'webhook.disabled',
  // About the account's sending reputation (docs/sending.md, "Sending reputation"): a warning, then a pause.
  'account.reputation_warning',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A test send's event name (spec §6.1); never subscribable. */
export const TEST_EVENT = 'test';

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** `delivered` → `email.delivered`; prefixed names pass through; anything else is null. */
export function normalizeEventName(name: string): EventType | null {
  const trimmed = name.trim();
  if (isEventType(trimmed)) return trimmed;
  const legacy = `email.${trimmed}`;
  return !trimmed.includes('.') && isEventType(legacy) ? legacy : null;
}

/** Normalized, deduplicated, in catalog order; or the names that are not events. */
export function normalizeEventNames(names: readonly string[]): { events: EventType[] } | { unknown: string[] } {
  const unknown = names.filter((name) => normalizeEventName(name) === null);
  if (unknown.length) return { unknown };
  const wanted = new Set(names.map((name) => normalizeEventName(name)));
  return { events: EVENT_TYPES.filter((type) => wanted.has(type)) };
}

/**
 * Why a name is not an event type, for a person: the closest type when it is a likely typo (at most a third of
 * its letters apart), then every valid type.
 */
export function unknownEventTypeMessage(name: string): string {
  const wanted = name.trim().toLowerCase();
  const scored = EVENT_TYPES.map((type) => ({
    type,
    distance: Math.min(editDistance(wanted, type), editDistance(`email.${wanted}`, type)),
  }));
  const best = scored.reduce((a, b) => (b.distance < a.distance ? b : a));
  const hint = best.distance <= Math.max(1, Math.floor(wanted.length / 3)) ? ` Did you mean "${best.type}"?` : '';
  return `Unknown event type ${JSON.stringify(name.slice(0, 100))}.${hint} Valid types: ${EVENT_TYPES.join(', ')}.`;
}

/** Levenshtein distance (insertions, deletions, substitutions), one row at a time; names are short. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length] as number;
}

/** An event as the pipeline carries it. `data` holds the event-specific details (spec §6.3). */
export interface SendflowEvent {
  readonly id: string;
  readonly type: EventType | typeof TEST_EVENT;
  readonly accountId: string;
  readonly mode: Mode;
  /** ISO 8601 UTC, when the thing happened. */
  readonly timestamp: string;
  readonly emailId?: string;
  readonly to?: string;
  readonly data: Readonly<Record<string, unknown>>;
  /**
   * The email's tags (`{name: value}`) on an email event, for webhook filters (domain/webhooks/filter.ts); not in
   * any payload. Absent on other events, on emails without tags, and on events recorded before it was carried.
   */
  readonly tags?: Readonly<Record<string, string>>;
  /**
   * The trace that caused it (domain/trace-context.ts, compact): the API request's span, or the caller's context
   * passed through. Not in any payload; the webhook request's `traceparent` continues it. Absent when untraced.
   */
  readonly trace?: string;
}

/**
 * The `standard` format body (spec §2.3): exactly these fields, in this order. An email event also carries its
 * `sequence` (domain/email/sequence.ts), after `timestamp`: computed from the event, so every render is the same.
 */
export function standardPayload(event: SendflowEvent): string {
  return JSON.stringify(standardBody(event));
}

/** The `standard` format body as an object (what standardPayload serializes, and what a webhook filter sees). */
export function standardBody(event: SendflowEvent): Record<string, unknown> {
  const sequence = eventSequence(event);
  return {
    id: event.id,
    type: event.type,
    ...(event.emailId !== undefined ? { email_id: event.emailId } : {}),
    ...(event.to !== undefined ? { to: event.to } : {}),
    timestamp: event.timestamp,
    // Resend's name for the time (what its SDK's webhooks.verify hands back).
    created_at: event.timestamp,
    ...(sequence !== null ? { sequence } : {}),
    data: { ...event.data, ...resendEmailData(event) },
  };
}

/**
 * Resend's fields of an email event's data, derived from the event (docs/webhooks.md, "Resend's fields"):
 * `email_id`, `created_at` (when the email was accepted: its id's time), `to` (a list), and per type `bounce`,
 * `click`, `failed` or `suppressed`. Nothing for other events (theirs are in their data as recorded).
 */
export function resendEmailData(event: SendflowEvent): Record<string, unknown> {
  const { emailId, to, data } = event;
  if (emailId === undefined || to === undefined || !event.type.startsWith('email.')) return {};
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const accepted = timeOfId(emailId, 'email');
  const common = {
    email_id: emailId,
    created_at: accepted === null ? event.timestamp : new Date(accepted).toISOString(),
    to: [to],
  };
  switch (event.type) {
    case 'email.bounced':
      return {
        ...common,
        bounce: {
          message: text(data.diagnostic_code),
          subType: text(data.bounce_sub_type),
          type: text(data.bounce_type),
        },
      };
    case 'email.clicked':
      return {
        ...common,
        click: {
          ipAddress: text(data.ip_address),
          link: text(data.link),
          timestamp: event.timestamp,
          userAgent: text(data.user_agent),
        },
      };
    case 'email.failed':
      return { ...common, failed: { reason: text(data.reason) } };
    case 'email.suppressed':
      return {
        ...common,
        suppressed: {
          message: `Not sent: the address is on the account's suppression list (${text(data.reason)}).`,
          type: text(data.reason),
        },
      };
    default:
      return common;
  }
}

/** What a new event is made from: `at` is when it happened; `idAt` (default `at`) orders its id. */
export interface NewEvent {
  readonly type: SendflowEvent['type'];
  readonly accountId: string;
  readonly mode: Mode;
  readonly at: number;
  readonly idAt?: number;
  readonly emailId?: string;
  readonly to?: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly tags?: Readonly<Record<string, string>>;
  readonly trace?: string;
}

/** A new event with a time-ordered id from `random` (a seeded one makes the id deterministic). */
export function newEvent(event: NewEvent, random: (size: number) => Uint8Array): SendflowEvent {
  return {
    id: timeOrderedId('evt', event.idAt ?? event.at, random),
    type: event.type,
    accountId: event.accountId,
    mode: event.mode,
    timestamp: new Date(event.at).toISOString(),
    ...(event.emailId !== undefined ? { emailId: event.emailId } : {}),
    ...(event.to !== undefined ? { to: event.to } : {}),
    data: event.data,
    ...(event.tags !== undefined ? { tags: event.tags } : {}),
    ...(event.trace !== undefined ? { trace: event.trace } : {}),
  };
}

/** An event about one recipient of an email: `to` is its bare address; data carries from and subject. */
export function emailEvent(
  email: Pick<EmailMessage, 'id' | 'accountId' | 'mode' | 'from' | 'subject' | 'templateId'> &
    Partial<Pick<EmailMessage, 'tags' | 'trace'>>,
  recipient: string,
  type: SendflowEvent['type'],
  data: Readonly<Record<string, unknown>>,
  timing: { at: number; idAt?: number },
  random: (size: number) => Uint8Array,
): SendflowEvent {
  return newEvent(
    {
      type,
      accountId: email.accountId,
      mode: email.mode,
      ...timing,
      emailId: email.id,
      to: bareAddress(recipient),
      data: {
        from: email.from,
        subject: email.subject,
        ...(email.templateId !== undefined ? { template_id: email.templateId } : {}),
        ...data,
      },
      ...(email.tags?.length ? { tags: tagMap(email.tags) } : {}),
      ...(email.trace !== undefined ? { trace: email.trace } : {}),
    },
    random,
  );
}

/** An email's tags as a filter reads them: `{name: value}` (a name given twice: its last value). */
export function tagMap(tags: readonly { readonly name: string; readonly value: string }[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const { name, value } of tags)
    Object.defineProperty(map, name, { value, enumerable: true, writable: true, configurable: true });
  return map;
}
