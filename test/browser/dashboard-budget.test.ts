// The dashboard's own request budget in Chromium: browsing on the free plan (10 API requests a second) never
// spends the account's API rate limit, and past the dashboard's own bound a page says so in its own words.
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_REQUESTS_PER_SECOND } from '../../lambdas/domain/dashboard/session';
import { newPage, signIn, useDashboardWorld } from '../support/browser';
import type { TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let browser: Browser;
useDashboardWorld((world) => {
  ({ rt, browser } = world);
});

const PAGES = ['', '/webhooks', '/emails', '', '/api-keys', '/domains', '/contacts'];

describe("the dashboard's request budget", () => {
  it('serves 30 page views in 10 s on the free plan without a 429, and leaves the keys their whole limit', async () => {
    // Arrange: a free account with four webhooks, so the overview makes six API calls (usage, the list, and
    // the deliveries of each).
    const { accountId, key } = await rt.newKey({ plan: 'free' });
    for (let i = 0; i < 4; i++) {
      await rt.call('/webhooks', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `https://example.com/hook${i}`, events: ['email.sent'] }),
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1000)); // a fresh window for the keys
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    // Act: 30 views in bursts of five a second (four pages within a second was enough for a 429 before; five
    // a burst keeps any one-second window within the dashboard's own ten).
    const started = Date.now();
    const statuses: number[] = [];
    const titles: string[] = [];
    for (let i = 0; i < 30; i++) {
      const due = started + Math.floor(i / 5) * 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      const answer = await page.goto(`${rt.url}/dashboard${PAGES[i % PAGES.length]}`);
      statuses.push(answer?.status() ?? 0);
      titles.push((await page.getByRole('heading', { level: 1 }).textContent()) ?? '');
    }
    const elapsed = Date.now() - started;
    // Right after, in the same second, a key still has its whole window.
    const keyed = await rt.call('/usage', { key });

    // Assert
    expect(elapsed).toBeLessThanOrEqual(10_500);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(titles).not.toContain('Not available');
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('x-ratelimit-remaining')).toBe('9');
    await context.close();
  });

  it("past the dashboard's own bound answers a clear 429 page, not the API's message", async () => {
    const { accountId } = await rt.newKey({ plan: 'free' });
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    // Three times the bound at once (the session's cookie goes with each).
    const answers = await Promise.all(
      Array.from({ length: DASHBOARD_REQUESTS_PER_SECOND * 3 }, () =>
        context.request.get(`${rt.url}/dashboard/emails`),
      ),
    );
    const refused = answers.filter((a) => a.status() === 429);

    expect(refused.length).toBeGreaterThan(0);
    const text = await refused[0]?.text();
    expect(text).toContain('Too many pages at once');
    expect(text).toContain(`at most ${DASHBOARD_REQUESTS_PER_SECOND} pages a second`);
    expect(text).not.toContain('requests per second exceeded');
    expect(refused[0]?.headers()['retry-after']).toMatch(/^[12]$/);
    await context.close();
  });
});
