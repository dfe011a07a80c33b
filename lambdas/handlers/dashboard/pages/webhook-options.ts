// A webhook's delivery options in the dashboard: rate_limit_per_second and ordering, as form fields (create and
// edit), as read back from a form, and as facts. The API alone judges the values (its 422 is shown next to the
// field, in plain words).
import { html, type Safe } from '../http';
import { fieldError, type PageContext } from '../layout';
import type { WebhookItem } from './views';

type Options = Pick<WebhookItem, 'rate_limit_per_second' | 'ordering'>;

const ORDERINGS = [
  ['none', 'None: each event as soon as it can go'],
  ['per_email', "Per email: an email's events in the order they happened"],
] as const;

/** The two fields, prefilled from the webhook on its edit form; `prefix` keeps the ids unique on a page. */
export function optionFields(ctx: PageContext, prefix: string, hook: Options | null): Safe {
  const rate = hook?.rate_limit_per_second ?? '';
  const ordering = hook?.ordering ?? 'none';
  const rateInvalid = Boolean(ctx.flash?.fields?.rate_limit_per_second);
  // No min/max on the input: the browser would refuse 0 or 5000 in its own words; the API says what it accepts.
  return html`<label for="${prefix}-rate">Rate limit (requests per second, optional)</label>
<input id="${prefix}-rate" name="rate_limit_per_second" type="number" inputmode="numeric" value="${String(rate)}"${rateInvalid ? html` aria-invalid="true"` : ''} aria-describedby="${prefix}-rate-hint${rateInvalid ? ` ${prefix}-rate-error` : ''}">
<p id="${prefix}-rate-hint" class="hint">1 to 1000 requests started per second; empty: unpaced. Nothing is dropped, deliveries wait their turn.</p>${fieldError(ctx, 'rate_limit_per_second', `${prefix}-rate`)}
<label for="${prefix}-ordering">Ordering</label><select id="${prefix}-ordering" name="ordering" aria-describedby="${prefix}-ordering-hint">${ORDERINGS.map(
    ([value, label]) => html`<option value="${value}"${value === ordering ? html` selected` : ''}>${label}</option>`,
  )}</select>
<p id="${prefix}-ordering-hint" class="hint">Per email: an event of an email is sent only once that email's earlier events to this endpoint succeeded or finally failed; other emails' events flow meanwhile.</p>`;
}

/**
 * The options as the API takes them. An empty rate limit is left out on create (unpaced) and null on edit
 * (unpaced again); anything not a number goes as typed, so the API's 422 names the field.
 */
export function optionsFromForm(form: URLSearchParams, on: 'create' | 'update'): Record<string, unknown> {
  const raw = form.get('rate_limit_per_second')?.trim() ?? '';
  const rate = raw === '' ? (on === 'update' ? null : undefined) : Number.isNaN(Number(raw)) ? raw : Number(raw);
  const ordering = form.get('ordering') || undefined;
  return {
    ...(rate !== undefined && form.has('rate_limit_per_second') ? { rate_limit_per_second: rate } : {}),
    ...(ordering ? { ordering } : {}),
  };
}

/** The facts of one webhook's page: its pace and its ordering. */
export function optionFacts(hook: Options): Safe {
  const n = hook.rate_limit_per_second ?? null;
  const rate = n === null ? 'Unpaced' : `${n} request${n === 1 ? '' : 's'} per second`;
  const ordering =
    hook.ordering === 'per_email' ? "per email: an email's events arrive in order" : 'none: events go as they come';
  return html`<dt>Rate limit</dt><dd>${rate}</dd><dt>Ordering</dt><dd>${ordering}</dd>`;
}
