// Daily byte quotas (docs/sending.md, "Limits"): the attachment bytes an account stores per UTC day (both modes
// together: test mode's simulated sends store real files too), and the received bytes stored for an account that
// receives mail. And how long test-mode files are kept. No I/O here.
import type { QuotaWindow } from './quota';

/** What a byte quota counts: attachments of sent emails, or received messages (raw, body and attachments). */
export type ByteQuotaKind = 'attachments' | 'inbound';

/**
 * The UTC day's window of a byte quota; its `month` is the counter's key part (`bytes-attachments#YYYY-MM-DD`),
 * apart from the email quotas' `YYYY-MM` and `test#YYYY-MM-DD`.
 */
export function byteQuotaWindow(kind: ByteQuotaKind, nowMs: number): QuotaWindow {
  const now = new Date(nowMs);
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return { month: `bytes-${kind}#${now.toISOString().slice(0, 10)}`, resetsAt: next / 1000 };
}

/** The day a byte quota's window counts (`YYYY-MM-DD`), as GET /v1/usage shows it. */
export const byteQuotaDay = (window: QuotaWindow): string => window.month.slice(window.month.indexOf('#') + 1);

/**
 * How long a test-mode email's attachments are kept after its send time: a day, against the email retention's
 * 30 (the email itself stays; its download links answer 404 after). Test mode sends nothing real: its files are
 * for looking at, not for keeping.
 */
export const TEST_FILE_RETENTION_SECONDS = 86_400;

/** Bytes in words for an error message: whole MiB or GiB where exact, else bytes. */
export function formatBytes(bytes: number): string {
  const gib = 1024 ** 3;
  const mib = 1024 ** 2;
  if (bytes >= gib && bytes % gib === 0) return `${bytes / gib} GiB`;
  if (bytes >= mib && bytes % mib === 0) return `${bytes / mib} MiB`;
  return `${bytes} bytes`;
}
