// Honest states on the dashboard (issue 31, item 3), on pages rendered against a recording API client that answers
// as the API does for the fields the pages read: the overview's failures include pending deliveries whose latest
// attempt failed; "Retry now" only where a retry can start; a canceled email shows when it was canceled; an email's
// deliveries are grouped by event with the recipient and time.
import { describe, expect, it } from 'vitest';
import { deliveryIdFor } from '../../lambdas/domain/webhooks/render';
import type { ApiClient, ApiResponse } from '../../lambdas/handlers/dashboard/api-client';
import { emailRoutes } from '../../lambdas/handlers/dashboard/pages/emails';
import { overviewRoutes } from '../../lambdas/handlers/dashboard/pages/overview';
import { webhookRoutes } from '../../lambdas/handlers/dashboard/pages/webhooks';
import type { DashboardRequest, DashboardRoute } from '../../lambdas/handlers/dashboard/routes';

const NOW = Date.UTC(2026, 11, 7, 9, 30);
const iso = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();

const hook = (active = true) => ({
  object: 'webhook',
  id: 'wh_1',
  url: 'https://hooks.example.com/1',
  events: ['email.delivered'],
  active,
  created_at: iso(600),
  disabled_reason: null,
  disabled_at: null,
  success_rate_24h: 0.5,
  last_failure_at: iso(1),
  health: 'failing',
  format: 'standard',
  description: null,
  ordering: 'none',
  rate_limit_per_second: null,
});

const attempt = (minutesAgo: number, status: number, error = status >= 300 ? `HTTP ${status}` : '') => ({
  at: iso(minutesAgo),
  status_code: status,
  duration_ms: 20,
  error,
  error_class: status >= 500 ? 'http_5xx' : status >= 400 ? 'http_4xx' : null,
  kind: 'automatic',
});

function delivery(id: string, status: string, attempts: ReturnType<typeof attempt>[], minutesAgo: number) {
  const latest = attempts.at(-1);
  return {
    object: 'webhook_delivery',
    id,
    webhook_id: 'wh_1',
    event: 'email.delivered',
    status,
    attempts: attempts.length,
    max_attempts: 5,
    status_code: latest?.status_code ?? null,
    duration_ms: 20,
    error: latest?.error || null,
    response: '',
    attempt_log: attempts,
    next_attempt_at: status === 'pending' ? iso(-5) : null,
    delivered_at: null,
    created_at: iso(minutesAgo),
    payload: '{}',
  };
}

const zero = { attempts: 0, succeeded: 0, retrying: 0, failed: 0, success_rate: null, p50_ms: null, p95_ms: null };
const NO_FIGURES = { window: '24h', totals: { ...zero, errors: [] }, data: [], webhooks: [] };
const REPUTATION = {
  judged: true,
  status: 'ok',
  window_days: 7,
  minimum_sent: 1000,
  thresholds: {
    warning: { bounce_rate: 0.02, complaint_rate: 0.001 },
    pause: { bounce_rate: 0.05, complaint_rate: 0.005 },
  },
  account: {
    domain_name: null,
    sent: 0,
    bounce_rate: null,
    complaint_rate: null,
    enough_volume: false,
    warned_at: null,
    paused_at: null,
  },
  domains: [],
};

function api(answers: Record<string, unknown>): ApiClient {
  const answer = <T>(body: unknown): ApiResponse<T> => ({ status: 200, body: body as T, headers: {} });
  return {
    async get<T>(path: string) {
      if (path in answers) return answer<T>(answers[path]);
      if (path.endsWith('/metrics') && path.startsWith('/webhooks')) return answer<T>(NO_FIGURES);
      if (path === '/emails/metrics') return answer<T>({ totals: {}, data: [], reputation: REPUTATION });
      throw new Error(`unexpected GET ${path}`);
    },
    async send() {
      throw new Error('no writes on a page');
    },
  };
}

async function render(routes: readonly DashboardRoute[], path: string, answers: Record<string, unknown>) {
  const found = routes.find((r) => r.method === 'GET' && r.pattern.test(path));
  if (found?.method !== 'GET') throw new Error(`no page ${path}`);
  const request: DashboardRequest = {
    api: api(answers),
    page: { accountId: 'acct_1', mode: 'live', plan: 'starter', csrf: 'c', flash: null },
    params: path.match(found.pattern)?.slice(1) ?? [],
    query: {},
    form: new URLSearchParams(),
    now: NOW,
  };
  // The page's header actions (Retry now sits there) and its content.
  const result = await found.page(request);
  return `${result.actions?.markup ?? ''}${result.content.markup}`;
}

/** The markup of the section whose heading has `id`. */
const section = (markup: string, id: string) =>
  new RegExp(`<section aria-labelledby="${id}">([\\s\\S]*?)</section>`).exec(markup)?.[1] ?? '';

describe('the overview', () => {
  it('lists pending deliveries whose latest attempt failed among the recent failures', async () => {
    const markup = await render(overviewRoutes, '', {
      '/usage': {
        plan: 'starter',
        rate_limit: { requests_per_second: 10 },
        live_emails_this_month: { period: 'month', used: 1, limit: 10, resets_at: iso(-1000) },
        test_recipients_today: { period: 'day', used: 1, limit: 10, resets_at: iso(-100) },
      },
      '/webhooks': { data: [hook()] },
      '/webhooks/wh_1/deliveries': {
        data: [
          delivery('dlv_500', 'pending', [attempt(3, 500)], 3),
          delivery('dlv_429', 'pending', [attempt(2, 429)], 2),
          delivery('dlv_ok', 'succeeded', [attempt(1, 200)], 1),
          delivery('dlv_new', 'pending', [], 0),
        ],
      },
    });

    const failures = section(markup, 'failures-h');
    expect(failures).not.toContain('No recent failures.');
    expect(failures).toContain('dlv_500');
    expect(failures).toContain('dlv_429');
    expect(failures).not.toContain('dlv_ok');
    expect(failures).not.toContain('dlv_new');
  });
});

describe('a delivery page', () => {
  const page = (status: string, active = true) =>
    render(webhookRoutes, 'webhooks/wh_1/deliveries/dlv_1', {
      '/webhooks/wh_1/deliveries/dlv_1': delivery('dlv_1', status, [attempt(2, 500)], 2),
      '/webhooks/wh_1': hook(active),
    });
  const retryButton = 'action="/v1/dashboard/webhooks/wh_1/deliveries/dlv_1/retry"';

  it('offers no "Retry now" while an attempt is scheduled (the API would answer 409), and says when it is due', async () => {
    const markup = await page('pending');
    expect(markup).not.toContain(retryButton);
    expect(markup).toContain('A retry is scheduled');
  });

  it('offers "Retry now" on a failed or succeeded delivery of an active webhook, not of a paused one', async () => {
    expect(await page('failed')).toContain(retryButton);
    expect(await page('succeeded')).toContain(retryButton);
    const paused = await page('failed', false);
    expect(paused).not.toContain(retryButton);
    expect(paused).toContain('Resume the webhook to retry');
  });
});

const email = (extra: Record<string, unknown>) => ({
  object: 'email',
  id: 'email_1',
  from: 'a@acme.test',
  to: ['x@example.com', 'y@example.com'],
  subject: 'Hi',
  status: 'delivered',
  created_at: iso(60),
  scheduled_at: null,
  canceled_at: null,
  tags: [],
  html: null,
  text: 'Hi',
  attachments: [],
  ...extra,
});

describe('emails', () => {
  it('shows when a canceled email was canceled, not its creation time as sent', async () => {
    const markup = await render(emailRoutes, 'emails', {
      '/emails': {
        data: [
          email({ id: 'email_c', status: 'canceled', scheduled_at: iso(-600), canceled_at: iso(5) }),
          email({ id: 'email_s', status: 'delivered' }),
        ],
        has_more: false,
      },
    });

    const row = (id: string) =>
      new RegExp(`<tr><td data-label="When"><a href="/v1/dashboard/emails/${id}">[\\s\\S]*?</tr>`).exec(markup)?.[0] ??
      '';
    expect(row('email_c')).toContain(
      `Canceled ${iso(5)
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')}`,
    );
    expect(row('email_c')).not.toContain(
      iso(60)
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC'),
    );
    expect(row('email_s')).toContain(
      iso(60)
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC'),
    );
  });

  it("groups an email's deliveries by event, each with its recipient and time", async () => {
    const events = [
      { id: 'evt_01a', type: 'email.delivered', to: 'x@example.com', timestamp: iso(50) },
      { id: 'evt_01b', type: 'email.delivered', to: 'y@example.com', timestamp: iso(49) },
    ];
    const ofEvent = (eventId: string, status: string) => ({
      ...delivery(deliveryIdFor(eventId, 'wh_1'), status, [attempt(40, status === 'succeeded' ? 200 : 500)], 40),
    });
    const markup = await render(emailRoutes, 'emails/email_1/deliveries', {
      '/emails/email_1': email({ events }),
      '/emails/email_1/deliveries': { data: [ofEvent('evt_01b', 'failed'), ofEvent('evt_01a', 'succeeded')] },
      '/webhooks': { data: [hook()] },
    });

    const hooks = section(markup, 'hooks-h');
    const groups = [...hooks.matchAll(/<th scope="rowgroup"[^>]*>([\s\S]*?)<\/th>/g)].map((m) =>
      (m[1] ?? '').replace(/<[^>]+>/g, ''),
    );
    const at = (minutesAgo: number) =>
      iso(minutesAgo)
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC');
    expect(groups).toEqual([
      `email.delivered to x@example.com at ${at(50)}`,
      `email.delivered to y@example.com at ${at(49)}`,
    ]);
    // In the table (the filter form above it lists event types, email.failed among them).
    const table = hooks.slice(hooks.indexOf('<table'));
    expect(table.indexOf('succeeded')).toBeLessThan(table.indexOf('failed'));
  });
});
