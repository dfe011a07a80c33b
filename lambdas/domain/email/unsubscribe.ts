// One-click unsubscribe (RFC 8058, spec §6.3): the headers every email carries, per recipient, and the
// POST body a mailbox provider sends.

export const ONE_CLICK = 'List-Unsubscribe=One-Click';
/** email.unsubscribed fires only for emails sent within this window (spec §8.6). */
export const ATTRIBUTION_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

export function listUnsubscribeHeaders(url: string): Record<string, string> {
  return { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': ONE_CLICK };
}

/** RFC 8058 POST body: `List-Unsubscribe=One-Click`, form-encoded or as a multipart/form-data field. */
export function isOneClickBody(body: string | null | undefined): boolean {
  if (!body) return false;
  if (new URLSearchParams(body.trim()).get('List-Unsubscribe') === 'One-Click') return true;
  return /name="List-Unsubscribe"\r?\n(?:[^\r\n]+\r?\n)*\r?\nOne-Click\r?\n/.test(body);
}
