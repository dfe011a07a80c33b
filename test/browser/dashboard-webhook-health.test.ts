// A webhook's health and delivery options in the dashboard (issue 18), in Chromium against a real receiver: a
// webhook its endpoint disabled with 410 Gone shows Disabled, why and the last error, and Resume brings it back;
// rate limit and ordering on create and edit, the API's 422 for a bad rate limit; a Retry-After on a delivery.
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
async function onWebhookPage(path: string) {
  const { accountId, key } = await rt.newKey();
  const made = await rt.call('/webhooks', { key, ...json({ url: `${receiver.url}${path}`, events: ['email.sent'] }) });
  const hook = (await made.json()) as { id: string };
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
const fact = (page: Page, term: string) =>
  page
    .locator('dl.facts dt', { hasText: new RegExp(`^${term.replace(/[()]/g, '\\$&')}$`) })
    .locator('xpath=following-sibling::dd[1]');
const apiHook = async (key: string, id: string) =>
  (await (await rt.call(`/webhooks/${id}`, { key })).json()) as Record<string, unknown>;

describe('webhook health in the dashboard', () => {
  it('shows a webhook disabled by 410 Gone with its reason, time and last error; Resume brings it back', async () => {
    const { key, hook, context, page } = await onWebhookPage('/gone');
    receiver.answer({ kind: 'status', status: 410, body: 'gone for good' });
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => flash(page, 'alert')).toContain('Test event: Not delivered');
    const disabled = await apiHook(key, hook.id);
    expect(disabled).toMatchObject({ active: false, disabled_reason: 'gone' });

    await page.reload();
    expect(await fact(page, 'State').textContent()).toContain('Disabled');
    const why = page.getByRole('region', { name: 'Disabled by Sendflow' });
    const explained = (await why.textContent()) ?? '';
    expect(explained).toContain('endpoint answered 410 Gone');
    expect(explained).toContain(new Date(String(disabled.disabled_at)).toISOString().replace('T', ' ').slice(0, 19));
    expect(explained).toContain('410');
    expect(explained).toContain('recovery job');
    await expectAccessibleAndNarrow(browser, page);

    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    const row = page.getByRole('row', { name: new RegExp(`${receiver.url}/gone`) });
    expect(await row.textContent()).toContain('Disabled: endpoint answered 410 Gone');

    await page.getByRole('link', { name: `${receiver.url}/gone` }).click();
    receiver.answer({ kind: 'status', status: 200, body: 'ok' });
    await why.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook resumed.');
    expect(await fact(page, 'State').textContent()).not.toContain('Disabled');
    expect(await page.getByRole('region', { name: 'Disabled by Sendflow' }).count()).toBe(0);
    expect(await page.getByRole('main').textContent()).not.toContain('410 Gone');
    expect(await apiHook(key, hook.id)).toMatchObject({ active: true, disabled_reason: null, disabled_at: null });
    await context.close();
  });

  it("shows the API's health figures: Failing after five failed attempts, the success rate and last failure", async () => {
    const { key, hook, context, page } = await onWebhookPage('/failing');
    receiver.answer({ kind: 'status', status: 500 });
    for (let i = 0; i < 5; i++) await rt.call(`/webhooks/${hook.id}/test`, { key, method: 'POST' });
    receiver.answer({ kind: 'status', status: 200 });
    const seen = await apiHook(key, hook.id);
    expect(seen).toMatchObject({ active: true, health: 'failing', success_rate_24h: 0 });
    await page.reload();

    expect(await fact(page, 'State').textContent()).toBe('Failing');
    expect(await fact(page, 'Success (24 h)').textContent()).toBe('0%');
    expect(await fact(page, 'Last failure').textContent()).toContain(
      String(seen.last_failure_at).replace('T', ' ').slice(0, 19),
    );
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    const row = (await page.getByRole('row', { name: new RegExp(`${receiver.url}/failing`) }).textContent()) ?? '';
    expect(row).toContain('Failing');
    expect(row).toContain('0%');
    await context.close();
  });
});

describe('rate limit and ordering', () => {
  it('creates a webhook with a rate limit and per-email ordering, shows them, and edits them back', async () => {
    const { accountId, key } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/paced`);
    await page.getByLabel('Rate limit (requests per second, optional)').fill('5');
    await page.getByLabel('Ordering').selectOption('per_email');
    await expectAccessibleAndNarrow(browser, page);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook created');

    expect(await fact(page, 'Rate limit').textContent()).toBe('5 requests per second');
    expect(await fact(page, 'Ordering').textContent()).toContain('per email');
    const id = new URL(page.url()).pathname.split('/').at(-1) ?? '';
    expect(await apiHook(key, id)).toMatchObject({ rate_limit_per_second: 5, ordering: 'per_email' });

    await tab(page, 'Settings');
    const edit = page.getByRole('region', { name: 'Edit' });
    expect(await edit.getByLabel('Rate limit (requests per second, optional)').inputValue()).toBe('5');
    expect(await edit.getByLabel('Ordering').inputValue()).toBe('per_email');
    await edit.getByLabel('Rate limit (requests per second, optional)').fill('');
    await edit.getByLabel('Ordering').selectOption('none');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook saved.');
    await tab(page, 'Overview');
    expect(await fact(page, 'Rate limit').textContent()).toBe('Unpaced');
    expect(await apiHook(key, id)).toMatchObject({ rate_limit_per_second: null, ordering: 'none' });
    await expectAccessibleAndNarrow(browser, page);
    await context.close();
  });

  it("shows the API's 422 for a rate limit out of range, on create and on edit", async () => {
    const { accountId, key } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/too-fast`);
    await page.getByLabel('Rate limit (requests per second, optional)').fill('5000');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    // In plain words, at the top and next to the field (which points at it), never the API's field name.
    const words = 'Rate limit must be at most 1000 per second.';
    expect(await flash(page, 'alert')).toBe(words);
    const rate = page.getByLabel('Rate limit (requests per second, optional)');
    expect(await rate.getAttribute('aria-invalid')).toBe('true');
    const describedBy = ((await rate.getAttribute('aria-describedby')) ?? '').split(' ');
    expect(await page.locator(`#${describedBy[1]}`).textContent()).toBe(words);
    expect(await page.getByRole('main').textContent()).not.toContain('rate_limit_per_second');
    expect((await (await rt.call('/webhooks', { key })).json()) as { data: unknown[] }).toMatchObject({ data: [] });

    // Post/Redirect/Get: the form comes back empty, as after any refused action.
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/too-fast`);
    await page.getByLabel('Rate limit (requests per second, optional)').fill('10');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook created');
    await tab(page, 'Settings');
    const edit = page.getByRole('region', { name: 'Edit' });
    await edit.getByLabel('Rate limit (requests per second, optional)').fill('0');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    expect(await flash(page, 'alert')).toBe('Rate limit must be at least 1 per second.');
    expect(await edit.locator('.field-error').textContent()).toBe('Rate limit must be at least 1 per second.');
    const id = new URL(page.url()).pathname.split('/').at(-2) ?? '';
    expect(await apiHook(key, id)).toMatchObject({ rate_limit_per_second: 10 });
    await context.close();
  });
});

describe('a delivery the endpoint asked to wait for', () => {
  it("shows an attempt's Retry-After (the endpoint asked to wait N s)", async () => {
    const { context, page } = await onWebhookPage('/busy');
    receiver.answer({ kind: 'status', status: 503, body: 'busy', headers: { 'Retry-After': '7' } });
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => flash(page, 'alert')).toContain('Test event: Not delivered');
    receiver.answer({ kind: 'status', status: 200 });
    await tab(page, 'Deliveries');
    await page
      .getByRole('table', { name: /^Deliveries/ })
      .getByRole('link')
      .first()
      .click();
    const attempts = await page.getByRole('table', { name: 'Attempts' }).getByRole('row').allTextContents();
    expect(attempts[1]).toContain('503');
    expect(attempts[1]).toContain('the endpoint asked to wait 7 s');
    await expectAccessibleAndNarrow(browser, page);
    await context.close();
  });
});
