// The API's JSON shapes as the dashboard reads them (the fields it shows), and small shared renderings.
import { html, type Safe } from '../http';

export interface WebhookItem {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  format?: string;
  description?: string | null;
  updated_at?: string;
}

export interface AttemptItem {
  at: string;
  status_code: number;
  duration_ms: number;
  error: string;
  error_class?: string | null;
}

export interface DeliveryItem {
  id: string;
  webhook_id: string;
  event: string;
  status: string;
  attempts: number;
  max_attempts: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  attempt_log: AttemptItem[];
  next_attempt_at: string | null;
  created_at: string;
  payload?: string;
}

export interface RecoveryItem {
  id: string;
  status: string;
  since: string;
  until: string;
  delivery_status: string | null;
  total: number;
  attempted: number;
  succeeded: number;
  failed: number;
  skipped: number;
  created_at: string;
  updated_at: string;
}

export function deliveryStatus(status: string): Safe {
  return html`<span class="status-${status}">${status}</span>`;
}

/** Checkbox values of a form field, e.g. the events picked. */
export const checked = (form: URLSearchParams, name: string) => form.getAll(name).filter(Boolean);
