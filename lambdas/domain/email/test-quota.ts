// The test-mode quota's window: recipients per UTC day (docs/sending.md, "Limits"), apart from live's month.
import type { QuotaWindow } from './quota';

/** The day's window; its `month` is the counter's key part (`test#YYYY-MM-DD`), distinct from live's `YYYY-MM`. */
export function testQuotaWindow(nowMs: number): QuotaWindow {
  const now = new Date(nowMs);
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return { month: `test#${now.toISOString().slice(0, 10)}`, resetsAt: next / 1000 };
}
