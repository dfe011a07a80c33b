// The filters the listings share (GET /v1/webhooks/:id/deliveries, GET /v1/emails/:id/deliveries, GET /v1/emails):
// `event_type`, a comma list of known event types, and a time window named as GET /v1/logs names it: `since` (at
// or after) and `until` (before), ISO 8601 with an offset. A window is a range of ids (ids are time-ordered): its
// upper end becomes an `after` cursor and its lower end a key condition, so it narrows the read, never widens it.
import * as z from 'zod';
import { idTime } from '../../domain/ids';

const instant = z.iso.datetime({ offset: true });

/** `since` and `until`: the window's fields, described for `what` ("deliveries whose event happened"). */
export function windowFields(what: string) {
  return {
    since: instant.optional().meta({
      description: `Only ${what} at or after this time (ISO 8601 with Z or an offset).`,
      example: '2026-12-01T00:00:00Z',
    }),
    until: instant.optional().meta({
      description: `Only ${what} before this time (ISO 8601; after \`since\`).`,
      example: '2026-12-08T00:00:00Z',
    }),
  };
}

/** A query refusal of a window whose `until` is not after its `since` (422, on `until`). */
export function checkWindow(query: { since?: string | undefined; until?: string | undefined }, ctx: z.RefinementCtx) {
  if (query.since === undefined || query.until === undefined) return;
  if (Date.parse(query.until) > Date.parse(query.since)) return;
  ctx.addIssue({
    code: 'custom',
    path: ['until'],
    message: `must be after \`since\` (${query.since}), not ${query.until}`,
  });
}

/** `event_type`: one or more of `types`, comma-separated, each checked; the types, without repeats. */
export function eventTypeField(types: readonly string[]) {
  const known = new Set(types);
  return z
    .string()
    .superRefine((value, ctx) => {
      const unknown = value.split(',').filter((type) => !known.has(type.trim()));
      if (unknown.length)
        ctx.addIssue({
          code: 'custom',
          message: `has an unknown event type: ${unknown.map((t) => JSON.stringify(t.trim())).join(', ')} (GET /v1/event-types lists them)`,
        });
    })
    .transform((value) => [...new Set(value.split(',').map((type) => type.trim()))])
    .optional()
    .meta({
      description:
        'Only these event types: one, or several separated by commas (the parameter is not repeated). GET /v1/event-types lists them.',
      example: 'email.bounced,email.complained',
    });
}

export interface IdWindow {
  /** The `after` to read with: the caller's cursor, or the window's upper end when that is lower. */
  readonly after?: string;
  /** The lowest id of the window (a prefix: `<prefix>_` and the time part of `since`). */
  readonly from?: string;
}

/**
 * The id range of a window, for ids `<prefix>_<time><rest>`: ids made at or after `since` sort at or after
 * `<prefix>_<idTime(since)>`, ids made before `until` sort before `<prefix>_<idTime(until)>`. The caller's `after`
 * (any id; a cursor from another window or filter still means "older than it") is kept when lower.
 */
export function idWindow(
  prefix: string,
  query: { since?: string | undefined; until?: string | undefined; after?: string | undefined },
): IdWindow {
  const bound = (iso: string) => `${prefix}_${idTime(Math.max(0, Date.parse(iso)))}`;
  const top = query.until === undefined ? undefined : bound(query.until);
  const after = top === undefined || (query.after !== undefined && query.after < top) ? query.after : top;
  return {
    ...(after !== undefined ? { after } : {}),
    ...(query.since !== undefined ? { from: bound(query.since) } : {}),
  };
}
