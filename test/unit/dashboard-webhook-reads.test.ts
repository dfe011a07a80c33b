// The webhook pages' API calls (lambdas/handlers/dashboard/pages/webhooks.ts): health comes with the webhook
// object, so the list is one call whatever the number of webhooks and the webhook page reads its log's newest 20
// deliveries only (until issue 18 the dashboard read 100 per webhook itself). A recording client answers as
// the API does for the fields the pages read.
import { describe, expect, it } from 'vitest';
import type { ApiClient, ApiResponse } from '../../lambdas/handlers/dashboard/api-client';
import { webhookRoutes } from '../../lambdas/handlers/dashboard/pages/webhooks';
import type { DashboardRequest, PageResult } from '../../lambdas/handlers/dashboard/routes';

const hook = (i: number) => ({
  object: 'webhook',
  id: `wh_${i}`,
  url: `https://example.com/${i}`,
  events: ['email.sent'],
  active: true,
  created_at: '2026-11-26T05:00:00.000Z',
  disabled_reason: null,
  disabled_at: null,
  success_rate_24h: 0.5,
  last_failure_at: '2026-11-26T05:10:00.000Z',
  health: 'healthy',
});

/** GET /v1/webhooks/metrics (or one webhook's) with nothing attempted: the charts' read, one call. */
const noFigures = (webhooks: number) => {
  const zero = { attempts: 0, succeeded: 0, retrying: 0, failed: 0, success_rate: null, p50_ms: null, p95_ms: null };
  return {
    object: 'webhook_metrics',
    window: '24h',
    totals: { ...zero, errors: [] },
    data: Array.from({ length: 24 }, (_, i) => ({
      hour: new Date(Date.UTC(2026, 10, 25, 7 + i)).toISOString(),
      ...zero,
    })),
    webhooks: Array.from({ length: webhooks }, (_, i) => ({
      webhook_id: `wh_${i}`,
      totals: zero,
      success_rate_by_hour: Array.from({ length: 24 }, () => null),
    })),
  };
};

function recordingApi(webhooks: number) {
  const calls: string[] = [];
  const answer = <T>(body: unknown): ApiResponse<T> => ({ status: 200, body: body as T, headers: {} });
  const api: ApiClient = {
    async get<T>(path: string, query: Record<string, string | undefined> = {}) {
      const shown = Object.entries(query).filter(([, v]) => v !== undefined);
      calls.push(`GET ${path}${shown.length ? `?${new URLSearchParams(shown as [string, string][])}` : ''}`);
      if (path === '/webhooks')
        return answer<T>({ object: 'list', data: Array.from({ length: webhooks }, (_, i) => hook(i)) });
      if (path.endsWith('/deliveries') || path.endsWith('/recoveries')) return answer<T>({ data: [], has_more: false });
      if (path.endsWith('/metrics')) return answer<T>(noFigures(webhooks));
      return answer<T>({
        ...hook(0),
        format: 'standard',
        description: null,
        ordering: 'none',
        rate_limit_per_second: null,
      });
    },
    async send() {
      throw new Error('no writes on a page');
    },
  };
  return { api, calls };
}

async function render(path: string, webhooks: number) {
  const { api, calls } = recordingApi(webhooks);
  const found = webhookRoutes.find((r) => r.method === 'GET' && r.pattern.test(path));
  if (found?.method !== 'GET') throw new Error(`no page ${path}`);
  const request: DashboardRequest = {
    api,
    page: { accountId: 'acct_1', mode: 'test', plan: 'starter', csrf: 'c', flash: null },
    params: path.match(found.pattern)?.slice(1) ?? [],
    query: {},
    form: new URLSearchParams(),
    now: Date.parse('2026-11-26T06:00:00.000Z'),
  };
  const result: PageResult = await found.page(request);
  return { calls, markup: result.content.markup };
}

describe('webhook pages read health from the webhook object', () => {
  it("the list is two API calls for 25 webhooks (the list, the trends' figures), with each one's rate and state", async () => {
    const { calls, markup } = await render('webhooks', 25);

    expect(calls.sort()).toEqual(['GET /webhooks', 'GET /webhooks/metrics?window=24h']);
    expect(markup.match(/50%/g)).toHaveLength(25);
    expect(markup.match(/>Healthy</g)).toHaveLength(25);
  });

  it("one webhook's overview reads itself, 20 deliveries and its hourly figures, not a 100-delivery sample", async () => {
    const { calls } = await render('webhooks/wh_0', 1);

    expect(calls.sort()).toEqual([
      'GET /webhooks/wh_0',
      'GET /webhooks/wh_0/deliveries?limit=20',
      'GET /webhooks/wh_0/metrics?window=24h',
    ]);
  });

  it('each tab of a webhook reads only what it shows', async () => {
    expect((await render('webhooks/wh_0/deliveries', 1)).calls.sort()).toEqual([
      'GET /webhooks/wh_0',
      'GET /webhooks/wh_0/deliveries?limit=20',
    ]);
    expect((await render('webhooks/wh_0/settings', 1)).calls).toEqual(['GET /webhooks/wh_0']);
    expect((await render('webhooks/wh_0/secret', 1)).calls).toEqual(['GET /webhooks/wh_0']);
    expect((await render('webhooks/wh_0/recovery', 1)).calls.sort()).toEqual([
      'GET /webhooks/wh_0',
      'GET /webhooks/wh_0/recoveries',
    ]);
  });
});
