// The order of an email's event history: by time, then by event id. Providers deliver events unordered and
// in several ISO 8601 forms, so the time is put in one fixed form first (strings then sort like times).
import { idTime } from '../ids';

export function historyOrderKey(entry: { readonly id: string; readonly timestamp: string }): string {
  const ms = Date.parse(entry.timestamp);
  // An unreadable time (never from our own pipeline) sorts as given rather than failing the event.
  return `${Number.isNaN(ms) ? entry.timestamp : new Date(ms).toISOString()}#${entry.id}`;
}

/**
 * True when the event's id sorts among such ids exactly as its history order key does: the id is made at the
 * event's own time (`evt_` + that millisecond, as SES's events' and the pipeline's are). An id made at another
 * time (an unsubscribe's, at the send; a simulated event's, at its step) does not, and needs the order key kept.
 */
export function idOrdersByTime(entry: { readonly id: string; readonly timestamp: string }): boolean {
  const ms = Date.parse(entry.timestamp);
  if (!Number.isSafeInteger(ms) || ms < 0) return false;
  return entry.id.startsWith(`evt_${idTime(ms)}`);
}
