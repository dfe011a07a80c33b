// Settings: the account's plan and limits (GET /v1/usage), the account itself (its id, the mode, where notices
// go), and "Sign out everywhere", which ends every dashboard session of the account. The address form and sign out
// everywhere POST to the dashboard's own actions (lambdas/handlers/dashboard/dashboard.ts, beside sign-out): no
// API route reads or writes the address (app/dashboard/notice-address).
import { html } from '../http';
import { type PageContext, postForm, textField, when } from '../layout';
import { type DashboardRequest, route } from '../routes';
import type { QuotaView, UsageView } from './views';

const count = (n: number) => n.toLocaleString('en-US');
const quota = (q: QuotaView, what: string) =>
  `${count(q.limit)} ${what} (${count(q.used)} used, resets ${when(q.resets_at)})`;

async function settings({ api, page }: DashboardRequest) {
  const { body: u } = await api.get<UsageView>('/usage');
  const signOutEverywhere = postForm(
    '/sign-out-everywhere',
    html`<button type="submit" class="danger">Sign out everywhere</button>`,
    page.csrf,
  );
  const content = html`<section aria-labelledby="plan-h"><h2 id="plan-h">Plan and limits</h2>
<dl class="facts"><dt>Plan</dt><dd>${u.plan}</dd>
<dt>API rate limit</dt><dd>${count(u.rate_limit.requests_per_second)} requests per second for your API keys</dd>
<dt>Live emails</dt><dd>${quota(u.live_emails_this_month, 'a month')}</dd>
<dt>Test recipients</dt><dd>${quota(u.test_recipients_today, 'a day')}</dd></dl>
<p class="hint">The plan is changed by whoever runs this Sendflow (<code>npm run admin -- set-plan</code>).</p></section>
<section aria-labelledby="account-h"><h2 id="account-h">Account</h2>
<dl class="facts"><dt>Account</dt><dd class="mono">${page.accountId}</dd><dt>This session's mode</dt><dd>${page.mode}</dd>
<dt>Address for notices</dt><dd>${page.noticeEmail ? html`<span class="mono">${page.noticeEmail}</span>` : 'None: Sendflow sends this account no notices.'}</dd></dl>
${noticeForm(page)}</section>
<section aria-labelledby="sessions-h"><h2 id="sessions-h">Sessions</h2>
<p>Signs this account out of the dashboard in every browser, in both modes, this one included (for example after a
shared computer or a lost laptop). Your API keys keep working; revoke one on the API keys page.</p>${signOutEverywhere}</section>`;
  return { title: 'Settings', section: '/settings', content };
}

/**
 * The address form: Save sets it (an empty field clears it), Remove clears it. A reputation warning or pause and a
 * webhook Sendflow disabled are mailed there (at most one notice of each kind a day) and shown in this dashboard
 * whether or not an address is kept.
 */
function noticeForm(page: PageContext) {
  const field = textField(page, {
    id: 'notice-email',
    name: 'notice_email',
    label: 'Email address for notices',
    type: 'email',
    attrs: html` autocomplete="email" maxlength="254" value="${page.noticeEmail ?? ''}"`,
  });
  const save = postForm('/settings/notice-email', html`${field}<button type="submit">Save address</button>`, page.csrf);
  const remove = page.noticeEmail
    ? postForm(
        '/settings/notice-email',
        html`<input type="hidden" name="notice_email" value=""><button type="submit" class="secondary">Remove address</button>`,
        page.csrf,
        'inline',
      )
    : '';
  return html`<p class="hint">Sendflow mails this address a short notice when the account's sending reputation is warned
or paused, or when it disables a webhook (at most one of each kind a day). The same is shown in this dashboard: on the
overview and on the webhook's page.</p>${save}${remove}`;
}

export const settingsRoutes = [route.get('settings', settings)];
