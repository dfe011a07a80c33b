// One webhook in the dashboard, end to end in Chromium against a real receiver: edit, pause and resume, send a
// test event and see its result, rotate the secret with a grace period, the delivery log (status filter,
// paging), a delivery's attempt timeline and exact payload, a retry (and its 409 explained), a recovery job
// and its progress, delete. Retries are 60 s apart here, so a failed email delivery stays pending.
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectAccessibleAndNarrow, newPage, signIn, useDashboardWorld } from '../support/browser';
import type { Receiver } from '../support/receiver';
import type { TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let browser: Browser;
let receiver: Receiver;
useDashboardWorld(
  (world) => {
    ({ rt, browser, receiver } = world);
  },
  { SF_RETRY_DELAYS: '60,60,60,60' },
);

const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

/** An account with a webhook to the receiver, signed in, on the webhook's page. */
async function onWebhookPage(path = '/hook') {
  const { accountId, key } = await rt.newKey();
  const made = await rt.call('/webhooks', { key, ...json({ url: `${receiver.url}${path}`, events: ['email.sent'] }) });
  const hook = (await made.json()) as { id: string; signing_secret: string };
  const { context, page } = await newPage(browser);
  await signIn(page, rt, accountId);
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('link', { name: `${receiver.url}${path}` }).click();
  return { key, hook, context, page };
}

const flash = (page: Page, role: 'status' | 'alert') => page.getByRole(role).first().textContent();
/** Opens one of the webhook page's tabs (each its own view). */
const tab = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Webhook' }).getByRole('link', { name, exact: true }).click();
const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

describe('one webhook', () => {
  it('edits the URL and events, pauses and resumes', async () => {
    const { key, hook, context, page } = await onWebhookPage('/edit');
    await expectAccessibleAndNarrow(browser, page);
    await tab(page, 'Settings');
    await expectAccessibleAndNarrow(browser, page);

    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/edited`);
    await page.getByRole('checkbox', { name: 'email.delivered' }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook saved.');

    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook paused.');
    const paused = (await (await rt.call(`/webhooks/${hook.id}`, { key })).json()) as Record<string, unknown>;
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook resumed.');
    const resumed = (await (await rt.call(`/webhooks/${hook.id}`, { key })).json()) as Record<string, unknown>;

    expect(paused).toMatchObject({
      url: `${receiver.url}/edited`,
      events: ['email.sent', 'email.delivered'],
      active: false,
    });
    expect(resumed.active).toBe(true);
    await context.close();
  });

  it('edits the payload filter and tests it on the newest delivery (with its email tags)', async () => {
    const { key, hook, context, page } = await onWebhookPage('/filtered');
    const sent = await rt.call('/emails', {
      key,
      ...json({
        from: 'a@acme.test',
        to: 'ada@example.com',
        subject: 'Hi',
        text: 'x',
        tags: [{ name: 'plan', value: 'pro' }],
      }),
    });
    expect(sent.status).toBe(200);
    await rt.settle();
    await tab(page, 'Settings');
    const filter = page.getByLabel('Filter (JSON, optional)');

    // A filter that does not match the newest delivery (email.sent to ada@): the reason names the clause.
    await filter.fill('{"tags": {"plan": "free"}}');
    await page.getByRole('button', { name: 'Test filter on the newest delivery' }).click();
    await expect.poll(() => flash(page, 'alert')).toContain('no match (not delivered): tags.plan is "pro", not "free"');
    expect(await filter.inputValue()).toBe('{"tags": {"plan": "free"}}');
    await filter.fill('{"data": {"to": "ada@example.com"}, "tags": {"plan": "pro"}}');
    await page.getByRole('button', { name: 'Test filter on the newest delivery' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('it matches (it would be delivered)');

    // Saved with the form; a bad one is the API's 422, shown; emptied, it is removed.
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook saved.');
    const read = async () =>
      ((await (await rt.call(`/webhooks/${hook.id}`, { key })).json()) as { filter: unknown }).filter;
    expect(await read()).toEqual({ data: { to: 'ada@example.com' }, tags: { plan: 'pro' } });
    await page.getByLabel('Filter (JSON, optional)').fill('{"data": {"to": {"$regex": "x"}}}');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => flash(page, 'alert')).toContain('is not an operator');
    await page.getByLabel('Filter (JSON, optional)').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook saved.');
    expect(await read()).toBeNull();
    await context.close();
  });

  it('edits the transformation, simulates typed code on the newest delivery, shows a 422 next to the field', async () => {
    const { key, hook, context, page } = await onWebhookPage('/transformed');
    const sent = await rt.call('/emails', {
      key,
      ...json({ from: 'a@acme.test', to: 'ada@example.com', subject: 'Hi', text: 'x' }),
    });
    expect(sent.status).toBe(200);
    await rt.settle();
    await tab(page, 'Settings');
    await expectAccessibleAndNarrow(browser, page);
    const code = page.getByLabel('Transformation (JavaScript, optional)');
    const simulate = page.getByRole('button', { name: 'Simulate on the newest delivery' });

    // Simulated, not saved: the request it would make; a throw is the error the attempt would record.
    const card = 'function handler(w) { w.payload = { card: w.eventType }; w.method = "PUT"; return w }';
    await code.fill(card);
    await simulate.click();
    await expect
      .poll(() => flash(page, 'status'))
      .toContain(`PUT ${receiver.url}/transformed with {"card":"email.sent"}`);
    expect(await code.inputValue()).toBe(card);
    await code.fill('function handler(w) { throw new Error("nope") }');
    await simulate.click();
    await expect.poll(() => flash(page, 'alert')).toContain('transformation failed: Error: nope');

    // Saved with the form; a syntax error is the API's 422, shown; emptied, it is removed.
    await code.fill(card);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook saved.');
    const read = async () =>
      ((await (await rt.call(`/webhooks/${hook.id}`, { key })).json()) as { transformation: unknown }).transformation;
    expect(await read()).toBe(card);
    await page.getByLabel('Transformation (JavaScript, optional)').fill('function handler(w) {');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.locator('#edit-transformation-error').textContent()).toContain('SyntaxError');
    await page.getByLabel('Transformation (JavaScript, optional)').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook saved.');
    expect(await read()).toBeNull();
    await context.close();
  });

  it('sends a test event and shows the result; rotates the secret with a grace period, shown once', async () => {
    const { hook, context, page } = await onWebhookPage('/test-send');
    receiver.answer({ kind: 'status', status: 200, body: 'ok' });
    const before = receiver.received.length;

    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Test event: Delivered: the endpoint answered HTTP 200.');
    expect(receiver.received.length).toBe(before + 1);

    receiver.answer({ kind: 'status', status: 503, body: 'down' });
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => flash(page, 'alert')).toContain('Test event: Not delivered');
    receiver.answer({ kind: 'status', status: 200, body: 'ok' });

    await tab(page, 'Signing secret');
    await page.getByLabel('Keep the previous secret signing for').selectOption('3600');
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('The previous secret keeps signing until');
    const secret = (await page.locator('#secret-value').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(hook.signing_secret);
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    await context.close();
  });

  it('filters the delivery log by status and pages to older deliveries', async () => {
    const { key, hook, context, page } = await onWebhookPage('/log');
    receiver.answer((n) => ({ kind: 'status', status: n % 3 === 0 ? 500 : 200 }));
    for (let i = 0; i < 22; i++) await rt.call(`/webhooks/${hook.id}/test`, { key, method: 'POST' });
    receiver.answer({ kind: 'status', status: 200 });
    await tab(page, 'Deliveries');

    const rows = () => page.getByRole('table', { name: /^Deliveries/ }).getByRole('row');
    expect(await rows().count()).toBe(21); // the header and 20
    await page.getByRole('link', { name: 'Older deliveries' }).click();
    await expect.poll(() => rows().count()).toBe(3);
    await page.getByRole('link', { name: 'Newest deliveries' }).click();

    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('table', { name: 'Deliveries (failed)' }).waitFor();
    const failedRows = await page
      .getByRole('table', { name: 'Deliveries (failed)' })
      .getByRole('row')
      .allTextContents();
    expect(failedRows.length).toBeGreaterThan(1);
    for (const row of failedRows.slice(1)) expect(row).toContain('failed');
    expect(failedRows.slice(1).some((row) => row.includes('succeeded'))).toBe(false);
    await expectAccessibleAndNarrow(browser, page);
    await context.close();
  });

  it("shows a delivery's attempt timeline and exact payload, no retry while one is scheduled, and retries it", async () => {
    const { key, hook, context, page } = await onWebhookPage('/timeline');
    receiver.answer({ kind: 'status', status: 500, body: 'boom' });
    const sent = await rt.call('/emails', {
      key,
      ...json({
        from: 'Acme <hello@acme.test>',
        to: ['success@simulator.amazonses.com'],
        subject: 'Hi',
        html: '<p>Hi</p>',
      }),
    });
    expect(sent.status).toBe(200);
    // The email.sent delivery fails once, then waits 60 s for its next attempt: pending, with one scheduled.
    await expect
      .poll(
        async () => {
          const log = (await (await rt.call(`/webhooks/${hook.id}/deliveries`, { key })).json()) as {
            data: { attempts: number; status: string }[];
          };
          return log.data.find((d) => d.attempts === 1 && d.status === 'pending') !== undefined;
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    await tab(page, 'Deliveries');
    await page
      .getByRole('table', { name: /^Deliveries/ })
      .getByRole('link')
      .first()
      .click();
    await expect.poll(() => heading(page)).toMatch(/^Delivery dlv_/);

    const attempts = await page.getByRole('table', { name: 'Attempts' }).getByRole('row').allTextContents();
    expect(attempts).toHaveLength(2);
    expect(attempts[1]).toMatch(/500/);
    expect(attempts[1]).toMatch(/\d+ ms/);
    expect(attempts[1]).toMatch(/UTC/);
    const payload = JSON.parse(
      (await page.getByRole('region', { name: 'Payload' }).locator('pre').textContent()) ?? '',
    );
    expect(payload.type).toBe('email.sent');
    await expectAccessibleAndNarrow(browser, page);

    // Pending, with a retry scheduled: no "Retry now" (the API would answer 409), but when the retry is due.
    expect(await page.getByRole('button', { name: 'Retry now' }).count()).toBe(0);
    expect(await page.locator('#retry-state').textContent()).toMatch(/^A retry is scheduled for .+UTC/);

    receiver.answer({ kind: 'status', status: 200, body: 'ok' });
    await rt.call(`/webhooks/${hook.id}/test`, { key, method: 'POST' });
    await page.goto(`${rt.url}/dashboard/webhooks/${hook.id}/deliveries?status=succeeded`);
    await page
      .getByRole('table', { name: /^Deliveries/ })
      .getByRole('link')
      .first()
      .click();
    await page.getByRole('button', { name: 'Retry now' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Retry: Delivered');
    expect(await page.getByRole('table', { name: 'Attempts' }).getByRole('row').count()).toBe(3);
    await context.close();
  });

  it('starts a recovery job and follows its progress', async () => {
    const { key, hook, context, page } = await onWebhookPage('/recover');
    receiver.answer({ kind: 'status', status: 500 });
    for (let i = 0; i < 3; i++) await rt.call(`/webhooks/${hook.id}/test`, { key, method: 'POST' });
    receiver.answer({ kind: 'status', status: 200 });
    await tab(page, 'Recovery');

    await page.getByLabel('From (UTC)').fill(new Date(Date.now() - 10 * 60_000).toISOString().slice(0, 19));
    await page.getByRole('button', { name: 'Start recovery' }).click();
    await expect.poll(() => heading(page)).toBe('Recovery job');
    expect(await flash(page, 'status')).toContain('Recovery started.');
    await expectAccessibleAndNarrow(browser, page);

    await expect
      .poll(
        async () => {
          await page.getByRole('link', { name: 'Refresh' }).click();
          return page.locator('#recovery-status').textContent();
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe('completed');
    expect(await page.getByRole('main').textContent()).toContain('3 (3 succeeded, 0 failed)');
    expect(await page.getByRole('progressbar', { name: 'Progress' }).getAttribute('value')).toBe('3');
    await context.close();
  });

  it('lists the event types with their payload schemas (the event catalog)', async () => {
    const { context, page } = await onWebhookPage('/catalog');
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('link', { name: 'Event types' }).click();
    expect(await heading(page)).toBe('Event types');
    await expectAccessibleAndNarrow(browser, page);

    const rows = page.getByRole('row');
    expect(await rows.count()).toBeGreaterThan(20);
    await page.getByText('Payload schema of email.delivered').click();
    const schema = JSON.parse((await page.locator('details[open] pre').first().textContent()) ?? '{}') as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    expect(schema.required).toEqual(expect.arrayContaining(['id', 'type', 'email_id', 'timestamp', 'data']));
    expect(schema.properties?.type).toEqual({ type: 'string', const: 'email.delivered' });
    await context.close();
  });

  it('deletes the webhook after its confirmation page', async () => {
    const { key, hook, context, page } = await onWebhookPage('/delete');

    await tab(page, 'Settings');
    await page.getByRole('link', { name: 'Delete webhook' }).click();
    await expect.poll(() => heading(page)).toBe('Delete this webhook?');
    await page.getByRole('button', { name: 'Delete webhook' }).click();

    await expect.poll(() => flash(page, 'status')).toContain('Webhook deleted.');
    await expect.poll(() => heading(page)).toBe('Webhooks');
    expect((await rt.call(`/webhooks/${hook.id}`, { key })).status).toBe(404);
    await context.close();
  });
});
