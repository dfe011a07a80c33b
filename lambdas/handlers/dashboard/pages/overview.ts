// The overview: plan and rate limit, then the newest deliveries across the first webhooks and the failures
// among them (each with its endpoint and why it failed).
import { html, type Safe } from '../http';
import { when } from '../layout';
import { type DashboardRequest, route } from '../routes';
import { type DeliveryItem, deliveryStatus, failureText, type WebhookItem } from './views';

/** The overview reads at most this many webhooks' logs (one API call each, in the dashboard's budget). */
const WEBHOOKS_SHOWN = 4;

interface QuotaView {
  period: string;
  used: number;
  limit: number;
  resets_at: string;
}

interface UsageView {
  plan: string;
  rate_limit: { requests_per_second: number };
  live_emails_this_month: QuotaView;
  test_recipients_today: QuotaView;
}

async function overview({ api, page }: DashboardRequest) {
  const [usage, hooks] = await Promise.all([
    api.get<UsageView>('/usage'),
    api.get<{ data: WebhookItem[] }>('/webhooks'),
  ]);
  const shown = hooks.body.data.slice(0, WEBHOOKS_SHOWN);
  const logs = await Promise.all(
    shown.map((hook) => api.get<{ data: DeliveryItem[] }>(`/webhooks/${hook.id}/deliveries`, { limit: '10' })),
  );
  const recent = logs
    .flatMap((log) => log.body.data)
    .sort((a, b) => b.created_at.localeCompare(a.created_at))
    .slice(0, 10);
  const failures = recent.filter((d) => d.status === 'failed');
  const { body: u } = usage;
  const endpoints = new Map(hooks.body.data.map((hook) => [hook.id, hook.url]));
  const content = html`<section aria-labelledby="plan-h"><h2 id="plan-h">Plan and limits</h2>
<dl class="facts"><dt>Plan</dt><dd>${u.plan}</dd>
<dt>Rate limit</dt><dd>${u.rate_limit.requests_per_second} requests per second for your API keys (the dashboard has its own budget)</dd>
<dt>Live emails this month</dt><dd>${quota(u.live_emails_this_month, 'live-quota')}</dd>
<dt>Test recipients today</dt><dd>${quota(u.test_recipients_today, 'test-quota')}</dd>
<dt>Webhooks</dt><dd>${hooks.body.data.length} in ${page.mode} mode</dd></dl></section>
<section aria-labelledby="recent-h"><h2 id="recent-h">Recent deliveries</h2>${deliveryTable(recent, endpoints, 'Recent deliveries', 'No deliveries yet.')}</section>
<section aria-labelledby="failures-h"><h2 id="failures-h">Recent failures</h2>${deliveryTable(failures, endpoints, 'Recent failures', 'No recent failures.')}</section>`;
  return { title: 'Overview', section: '', content };
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
  return html`<div class="table-wrap" tabindex="0"><table><caption class="skip">${caption}</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Endpoint</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Result</th></tr></thead>
<tbody>${rows.map(
    (
      d,
    ) => html`<tr><td><a href="/v1/dashboard/webhooks/${d.webhook_id}/deliveries/${d.id}">${when(d.created_at)}</a></td>
<td class="url"><a href="/v1/dashboard/webhooks/${d.webhook_id}">${endpoints.get(d.webhook_id) ?? d.webhook_id}</a></td>
<td>${d.event}</td><td>${deliveryStatus(d.status)}</td><td>${failureText(d)}</td></tr>`,
  )}</tbody></table></div>`;
}

export const overviewRoutes = [route.get('', overview)];
