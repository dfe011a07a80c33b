// The order of an email's event history: by time, then by event id. Providers deliver events unordered and
// in several ISO 8601 forms, so the time is put in one fixed form first (strings then sort like times).
export function historyOrderKey(entry: { readonly id: string; readonly timestamp: string }): string {
  const ms = Date.parse(entry.timestamp);
  // An unreadable time (never from our own pipeline) sorts as given rather than failing the event.
  return `${Number.isNaN(ms) ? entry.timestamp : new Date(ms).toISOString()}#${entry.id}`;
}
