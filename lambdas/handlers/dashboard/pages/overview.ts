// The overview: plan and rate limit, the sending reputation (bounce and complaint rates over the rolling window,
// a warning or a pause said plainly: GET /v1/emails/metrics), then the newest deliveries across the first webhooks
// and the failures among them (each with its endpoint and why it failed).
import { at, badge, dataTable, tokens } from '../components';
import { BASE, html, type Safe } from '../http';
import { when } from '../layout';
import { type DashboardRequest, route } from '../routes';
import { isFailure } from './delivery-states';
import { deliveryHealthSection, emailFiguresSection, windowOf } from './health-figures';
import { apiFilterQuery, DELIVERY_EVENT_TYPES, filtered, filterFields, readListFilters } from './list-filters';
import {
  type DeliveryItem,
  deliveryStatus,
  failureText,
  type QuotaView,
  type UsageView,
  type WebhookItem,
} from './views';

/** The overview reads at most this many webhooks' logs (one API call each, in the dashboard's budget). */
const WEBHOOKS_SHOWN = 4;

interface SubjectView {
  domain_name: string | null;
  sent: number;
  bounce_rate: number | null;
  complaint_rate: number | null;
  enough_volume: boolean;
  warned_at: string | null;
  paused_at: string | null;
}

interface ReputationView {
  judged: boolean;
  status: 'ok' | 'warning' | 'paused';
  window_days: number;
  minimum_sent: number;
  thresholds: Record<'warning' | 'pause', { bounce_rate: number; complaint_rate: number }>;
  account: SubjectView;
  domains: SubjectView[];
}

async function overview({ api, page, query }: DashboardRequest) {
  const [usage, hooks, metrics, health, emails] = await Promise.all([
    api.get<UsageView>('/usage'),
    api.get<{ data: WebhookItem[] }>('/webhooks'),
    api.get<{ reputation: ReputationView }>('/emails/metrics', { metrics: 'sent' }),
    deliveryHealthSection(api, { path: '', window: windowOf(query) }),
    emailFiguresSection(api),
  ]);
  const shown = hooks.body.data.slice(0, WEBHOOKS_SHOWN);
  const filters = readListFilters(query, DELIVERY_EVENT_TYPES);
  const logs = await Promise.all(
    shown.map((hook) =>
      api.get<{ data: DeliveryItem[] }>(`/webhooks/${hook.id}/deliveries`, { limit: '10', ...apiFilterQuery(filters) }),
    ),
  );
  const recent = logs
    .flatMap((log) => log.body.data)
    .sort((a, b) => b.created_at.localeCompare(a.created_at))
    .slice(0, 10);
  // Failed ones and pending ones whose latest attempt failed (a 500 or 429 waiting for its retry).
  const failures = recent.filter(isFailure);
  const { body: u } = usage;
  const endpoints = new Map(hooks.body.data.map((hook) => [hook.id, hook.url]));
  const content = html`<section aria-labelledby="plan-h"><h2 id="plan-h">Plan and limits</h2>
<dl class="facts"><dt>Plan</dt><dd>${u.plan}</dd>
<dt>Rate limit</dt><dd>${u.rate_limit.requests_per_second} requests per second for your API keys (the dashboard has its own budget)</dd>
<dt>Live emails this month</dt><dd>${quota(u.live_emails_this_month, 'live-quota')}</dd>
<dt>Test recipients today</dt><dd>${quota(u.test_recipients_today, 'test-quota')}</dd>
<dt>Webhooks</dt><dd>${hooks.body.data.length} in ${page.mode} mode</dd></dl></section>
${health}${emails}${reputation(metrics.body.reputation)}
<section aria-labelledby="recent-h"><h2 id="recent-h">Recent deliveries</h2><form method="get" action="${BASE}" class="filters">${windowField(query)}${filterFields(filters, 'recent', DELIVERY_EVENT_TYPES)}<div class="field"><button type="submit" class="secondary">Filter</button></div></form>
${deliveryTable(recent, endpoints, 'Recent deliveries', filtered(filters) ? 'No recent deliveries match these filters.' : 'No deliveries yet.')}</section>
<section aria-labelledby="failures-h"><h2 id="failures-h">Recent failures</h2>${deliveryTable(failures, endpoints, 'Recent failures', 'No recent failures.')}</section>`;
  return { title: 'Overview', section: '', content };
}

/** The chart window the page shows (`window=`), kept when the deliveries are filtered. */
const windowField = (query: Readonly<Record<string, string>>) =>
  query.window ? html`<input type="hidden" name="window" value="${query.window}">` : '';

const pct = (rate: number | null) => (rate === null ? '—' : `${+(rate * 100).toFixed(2)}%`);

/** The sending reputation: a pause or a warning first, in words, then each subject's rates over the window. */
function reputation(r: ReputationView): Safe {
  const t = r.thresholds;
  const who = (s: SubjectView) => (s.domain_name ? s.domain_name : 'Whole account');
  const paused = [r.account, ...r.domains].filter((s) => s.paused_at);
  const notice =
    r.status === 'paused'
      ? html`<p role="alert"><strong>Sending is paused</strong> for ${paused.map(who).join(', ')}: its bounce or complaint rate passed the pause threshold (${pct(t.pause.bounce_rate)} bounces, ${pct(t.pause.complaint_rate)} complaints), which puts the shared sending reputation at risk. Sends answer 403 <code>sending_paused</code>. Remove invalid and unconsenting addresses, then contact support to have the pause lifted.</p>`
      : r.status === 'warning'
        ? html`<p role="status"><strong>Reputation warning</strong>: a bounce or complaint rate passed the warning threshold (${pct(t.warning.bounce_rate)} bounces, ${pct(t.warning.complaint_rate)} complaints). Sending is paused at ${pct(t.pause.bounce_rate)} bounces or ${pct(t.pause.complaint_rate)} complaints.</p>`
        : html``;
  const judged = r.judged
    ? html`Over the last ${r.window_days} days, judged once ${r.minimum_sent.toLocaleString('en-US')} copies are sent.`
    : html`Test mode is not judged on this deployment: the figures are shown, nothing is paused.`;
  const rows = [r.account, ...r.domains];
  return html`<section aria-labelledby="reputation-h"><h2 id="reputation-h">Sending reputation</h2>${notice}
<p>${judged}</p>
${dataTable(
  'Bounce and complaint rates',
  ['Sender', 'Sent', 'Bounce rate', 'Complaint rate', 'Standing'],
  rows.map((s) => [
    tokens(who(s)),
    s.sent.toLocaleString('en-US'),
    pct(s.bounce_rate),
    pct(s.complaint_rate),
    standing(s),
  ]),
  { hiddenCaption: true },
)}</section>`;
}

function standing(s: SubjectView): Safe {
  if (s.paused_at) return html`${badge('Paused', 'bad')} since ${at(s.paused_at)}`;
  if (s.warned_at) return html`${badge('Warned', 'warn')} ${at(s.warned_at)}`;
  return s.enough_volume ? badge('Good', 'ok') : badge('Not enough volume to judge', 'neutral');
}

function quota(q: QuotaView, id: string): Safe {
  return html`<span id="${id}">${q.used.toLocaleString('en-US')} of ${q.limit.toLocaleString('en-US')}</span>
<progress aria-labelledby="${id}" max="${q.limit}" value="${Math.min(q.used, q.limit)}"></progress> (resets ${when(q.resets_at)})`;
}

function deliveryTable(
  rows: readonly DeliveryItem[],
  endpoints: ReadonlyMap<string, string>,
  caption: string,
  empty: string,
): Safe {
  if (!rows.length) return html`<p>${empty}</p>`;
  return dataTable(
    caption,
    ['Time', 'Endpoint', 'Event', 'Status', 'Result'],
    rows.map((d) => [
      html`<a href="${BASE}/webhooks/${d.webhook_id}/deliveries/${d.id}">${at(d.created_at)}</a>`,
      html`<a href="${BASE}/webhooks/${d.webhook_id}">${tokens(endpoints.get(d.webhook_id) ?? d.webhook_id)}</a>`,
      d.event,
      deliveryStatus(d.status),
      failureText(d),
    ]),
    { hiddenCaption: true, classes: [undefined, 'url'] },
  );
}

export const overviewRoutes = [route.get('', overview)];
