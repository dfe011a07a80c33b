// Charts end to end over real HTTP on the local runtime (issue 31, item 2): six test sends to a real receiver
// (3 answered 200, 2 answered 500, 1 answered 404) are counted into the webhook's hourly figures as they are made;
// GET /v1/webhooks/:id/metrics gives those counts, and the signed-in dashboard's webhook page, overview and list
// draw them: the table behind each chart holds the same counts, and the list's sparkline says the rate in words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
import { tableCells } from '../support/html-tables';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;

beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await rt?.stop();
});

async function signedIn(accountId: string): Promise<string> {
  const { url } = await createSignInLink(rt.services, { accountId, mode: 'test', baseUrl: rt.url });
  const res = await fetch(`${rt.url}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: new URL(rt.url).origin },
    body: new URLSearchParams({ token: new URL(url).searchParams.get('token') ?? '' }).toString(),
  });
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

/** The rows of a chart's table added up by column (an hour boundary may split the sends over two rows). */
function columnSums(rows: string[][]): number[] {
  return rows
    .slice(1)
    .reduce<number[]>(
      (sums, row) => row.slice(1).map((cell, i) => (sums[i] ?? 0) + Number(cell.replace(/,/g, ''))),
      [],
    );
}

describe('delivery health charts', () => {
  it('count a known mix of outcomes as attempts are made, and draw them from those counts', async () => {
    // Arrange
    const { accountId, key } = await rt.newKey({ mode: 'test' });
    const created = await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/hook`, events: ['email.delivered'] }),
    });
    const { id } = (await created.json()) as { id: string };
    const statuses = [200, 500, 200, 404, 500, 200];
    receiver.answer((n) => ({ kind: 'status', status: statuses[n - 1] ?? 200 }));

    // Act
    for (const _ of statuses) {
      expect((await rt.call(`/webhooks/${id}/test`, { method: 'POST', key })).status).toBe(200);
    }
    const api = (await (await rt.call(`/webhooks/${id}/metrics`, { key })).json()) as {
      totals: { attempts: number; succeeded: number; retrying: number; failed: number; errors: unknown[] };
      data: unknown[];
    };
    const cookie = await signedIn(accountId);
    const page = async (path: string) => {
      const res = await fetch(`${rt.url}/dashboard${path}`, { headers: { cookie } });
      expect(res.status).toBe(200);
      return res.text();
    };
    const [webhookPage, overview, list] = [await page(`/webhooks/${id}`), await page(''), await page('/webhooks')];

    // Assert: the API's figures…
    expect(api.totals).toMatchObject({ attempts: 6, succeeded: 3, retrying: 0, failed: 3 });
    expect(api.totals.errors).toEqual([
      { error_class: 'http_5xx', count: 2 },
      { error_class: 'http_4xx', count: 1 },
    ]);
    expect(api.data).toHaveLength(24);
    // A bad window is the caller's mistake (422, the API's words); another account's webhook is not found.
    const bad = await rt.call('/webhooks/metrics?window=1y', { key });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain('Must be 24h or 7d.');
    const { key: other } = await rt.newKey({ mode: 'test' });
    expect((await rt.call(`/webhooks/${id}/metrics`, { key: other })).status).toBe(404);
    // …the tables behind the webhook page's charts and the overview's (succeeded, retrying, failed)…
    expect(columnSums(tableCells(webhookPage, 'webhook-outcomes-table'))).toEqual([3, 0, 3]);
    expect(tableCells(webhookPage, 'webhook-errors-table')).toEqual([
      ['Error class', 'Count'],
      ['http 5xx', '2'],
      ['http 4xx', '1'],
    ]);
    expect(tableCells(webhookPage, 'webhook-latency-table').length).toBeGreaterThan(1);
    expect(columnSums(tableCells(overview, 'account-outcomes-table'))).toEqual([3, 0, 3]);
    expect(overview).toContain(
      '6 attempts to your endpoints: 3 succeeded, 0 failed and were retried, 3 failed for good',
    );
    // …and the list's sparkline, in words.
    expect(list).toMatch(/aria-label="Success rate per hour, last 24 h: 50% on average over [12] hours? with attempts/);
  }, 60_000);

  it("count the delivery worker's automatic attempts too (held 5 s at most, then written)", async () => {
    // Arrange
    const { key } = await rt.newKey({ mode: 'test' });
    const hooked = await startReceiver();
    const created = await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${hooked.url}/auto`, events: ['email.sent', 'email.delivered'] }),
    });
    const { id } = (await created.json()) as { id: string };

    // Act
    const sent = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'a@acme.test', to: 'delivered@simulator.sendflow.dev', subject: 'Hi', text: 'Hi' }),
    });
    expect(sent.status).toBe(200);
    await rt.settle();
    await hooked.waitFor(2);
    const started = Date.now();
    let attempts = 0;
    while (attempts < 2 && Date.now() - started < 15_000) {
      const body = (await (await rt.call(`/webhooks/${id}/metrics`, { key })).json()) as {
        totals: { attempts: number; succeeded: number };
      };
      attempts = body.totals.succeeded;
      if (attempts < 2) await new Promise((r) => setTimeout(r, 100));
    }
    await hooked.close();

    // Assert: email.sent and email.delivered, each delivered once.
    expect(attempts).toBe(hooked.received.length);
    expect(attempts).toBe(2);
  }, 60_000);
});
