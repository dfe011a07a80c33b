// The event-type and time-window filters of the dashboard's lists (the overview's recent deliveries, a webhook's
// delivery log, an email's deliveries, the email list): fields of a GET form (no script), read back from the
// page's query, checked here (a malformed or reversed window is said next to its field, in plain words, and not
// sent), and carried by every paging link. Times are typed as UTC (`datetime-local` has no zone); the API gets
// them as ISO 8601 with Z (`since`, `until`), the event types as `event_type`.
import { EVENT_TYPES, TEST_EVENT } from '../../../domain/events';
import { html, type Safe } from '../http';

/** What a delivery's event can be: an event type, or a test send's. */
export const DELIVERY_EVENT_TYPES: readonly string[] = [...EVENT_TYPES, TEST_EVENT];
/** The events an email's deliveries can be of. */
export const EMAIL_EVENT_TYPES: readonly string[] = EVENT_TYPES.filter((type) => type.startsWith('email.'));

export interface ListFilters {
  /** One event type, or undefined for any. */
  readonly eventType?: string | undefined;
  /** The fields as typed (`2026-12-01T10:00`), for the form and the links. */
  readonly sinceInput: string;
  readonly untilInput: string;
  /** ISO 8601 (Z), when the field holds a valid time (and the window is not reversed). */
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  /** Field → problem in plain words. */
  readonly errors: Readonly<Partial<Record<'since' | 'until', string>>>;
}

/** `2026-12-01T10:00` (or with seconds, or an ISO time with Z) as UTC; undefined when it is not a time. */
function utc(input: string): string | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?))?Z?$/.exec(input);
  if (!match) return undefined;
  const iso = `${match[1]}T${match[2] ?? '00:00'}${(match[2]?.length ?? 0) > 5 ? '' : ':00'}Z`;
  const ms = Date.parse(iso);
  // Date.parse rolls 2026-02-30 over into March: refuse what does not read back as typed.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== match[1]) return undefined;
  return new Date(ms).toISOString();
}

/** The filters of a page's query; `eventTypes` the ones its select offers (others are ignored). */
export function readListFilters(
  query: Readonly<Record<string, string>>,
  eventTypes: readonly string[] = [],
): ListFilters {
  const eventType = eventTypes.find((type) => type === query.event_type);
  const sinceInput = (query.since ?? '').trim();
  const untilInput = (query.until ?? '').trim();
  const errors: Partial<Record<'since' | 'until', string>> = {};
  const since = sinceInput ? utc(sinceInput) : undefined;
  const until = untilInput ? utc(untilInput) : undefined;
  if (sinceInput && !since) errors.since = 'Enter a date and time, for example 2026-12-01T09:30.';
  if (untilInput && !until) errors.until = 'Enter a date and time, for example 2026-12-01T17:00.';
  if (since && until && Date.parse(until) <= Date.parse(since)) errors.until = '“To” must be later than “From”.';
  const ok = !errors.since && !errors.until;
  return {
    eventType,
    sinceInput,
    untilInput,
    ...(ok ? { since, until } : {}),
    errors,
  };
}

/** The API query of the filters (what is valid of them); undefined values are left out by the client. */
export function apiFilterQuery(f: ListFilters): Record<string, string | undefined> {
  return { event_type: f.eventType, since: f.since, until: f.until };
}

/** The page query that shows these filters again (paging links keep it). */
export function pageFilterQuery(f: ListFilters): Record<string, string | undefined> {
  return { event_type: f.eventType, since: f.sinceInput || undefined, until: f.untilInput || undefined };
}

/** True when a filter narrows the list (to word an empty list). */
export const filtered = (f: ListFilters) => Boolean(f.eventType || f.since || f.until);

/** The form's fields: event type (when `eventTypes` is given) and the window; `id` prefixes the ids. */
export function filterFields(f: ListFilters, id: string, eventTypes?: readonly string[]): Safe {
  const described = (name: 'since' | 'until') =>
    f.errors[name] ? html` aria-invalid="true" aria-describedby="${id}-${name}-error"` : '';
  const problem = (name: 'since' | 'until') =>
    f.errors[name] ? html`<p class="field-error" id="${id}-${name}-error">${f.errors[name]}</p>` : '';
  const types = eventTypes
    ? html`<div class="field"><label for="${id}-event">Event type</label><select id="${id}-event" name="event_type"><option value="">Any</option>${eventTypes.map(
        (t) => html`<option value="${t}"${t === f.eventType ? html` selected` : ''}>${t}</option>`,
      )}</select></div>`
    : '';
  return html`${types}<div class="field"><label for="${id}-since">From (UTC)</label><input id="${id}-since" name="since" type="datetime-local" step="1" value="${f.sinceInput}"${described('since')}>${problem('since')}</div>
<div class="field"><label for="${id}-until">To (UTC)</label><input id="${id}-until" name="until" type="datetime-local" step="1" value="${f.untilInput}"${described('until')}>${problem('until')}</div>`;
}
