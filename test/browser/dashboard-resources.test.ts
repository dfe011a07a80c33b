// Domains, contacts and emails in the dashboard, end to end in Chromium: add a domain and see its DNS records
// with copy buttons, verify it (simulated DNS checks pass at once here), delete it; add and delete contacts;
// the email list (newest first, filters) and one email with its events and webhook deliveries.
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectAccessibleAndNarrow, newPage, signIn, useDashboardWorld } from '../support/browser';
import type { Receiver } from '../support/receiver';
import type { TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let browser: Browser;
let receiver: Receiver;
useDashboardWorld((world) => {
  ({ rt, browser, receiver } = world);
});

const flash = (page: Page) => page.getByRole('status').first().textContent();

async function signedIn(section: string) {
  const { accountId, key } = await rt.newKey();
  const { context, page } = await newPage(browser);
  await signIn(page, rt, accountId);
  await page.getByRole('link', { name: section }).click();
  return { key, context, page };
}

describe('domains', () => {
  it('adds a domain, shows its DNS records with copy buttons, verifies it, and deletes it', async () => {
    const { key, context, page } = await signedIn('Domains');
    await expectAccessibleAndNarrow(browser, page);

    await page.getByLabel('Domain name').fill('mail.dashboard-test.example');
    await page.getByRole('button', { name: 'Add domain' }).click();

    await expect.poll(() => flash(page)).toContain('Domain mail.dashboard-test.example added');
    const records = page.getByRole('table', { name: 'DNS records to publish' }).getByRole('row');
    expect(await records.count()).toBeGreaterThan(1);
    expect(await page.getByRole('button', { name: 'Copy value of record 1' }).count()).toBe(1);
    await expectAccessibleAndNarrow(browser, page);

    await page.getByRole('button', { name: 'Verify DNS records now' }).click();
    await expect.poll(() => flash(page)).toContain('Checked: the domain is');
    const { data } = (await (await rt.call('/domains', { key })).json()) as { data: { status: string }[] };
    expect(await page.locator('#domain-status').textContent()).toBe(data[0]?.status);

    await page.getByRole('link', { name: 'Delete domain' }).click();
    await page.getByRole('button', { name: /^Delete / }).click(); // on its confirmation page
    await expect.poll(() => flash(page)).toContain('Domain deleted.');
    expect(((await (await rt.call('/domains', { key })).json()) as { data: unknown[] }).data).toEqual([]);
    await context.close();
  });

  it("shows the API's refusal of a bad name in the API's words, next to the field", async () => {
    const { context, page } = await signedIn('Domains');
    await page.getByLabel('Domain name').fill('not a domain');
    await page.getByRole('button', { name: 'Add domain' }).click();
    // In plain words: the form's label, not the API's field name.
    const words = 'Domain name must be a domain name such as mail.example.com.';
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(words);
    // The same sentence under the input, which points at it (its accessible description) and is marked invalid.
    const input = page.getByLabel('Domain name');
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await input.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`#${describedBy}`).textContent()).toBe(words);
    expect(await page.locator(`#${describedBy} code`).count()).toBe(0);
    await expectAccessibleAndNarrow(browser, page);
    // It is shown once: the next view of the form is clean.
    await page.reload();
    expect(await page.getByLabel('Domain name').getAttribute('aria-invalid')).toBeNull();
    await context.close();
  });
});

describe('contacts', () => {
  it('lists, adds and deletes contacts', async () => {
    const { key, context, page } = await signedIn('Contacts');
    expect(await page.getByRole('main').textContent()).toContain('No contacts in test mode yet.');

    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('First name (optional)').fill('Ada');
    await page.getByRole('button', { name: 'Add contact' }).click();

    await expect.poll(() => flash(page)).toContain('Contact ada@example.com added');
    expect(await page.getByRole('row', { name: /ada@example\.com/ }).textContent()).toContain('Ada');
    await expectAccessibleAndNarrow(browser, page);

    await page.getByRole('link', { name: 'Delete ada@example.com' }).click();
    await page.getByRole('button', { name: 'Delete ada@example.com' }).click(); // on its confirmation page
    await expect.poll(() => flash(page)).toContain('Contact deleted.');
    expect(((await (await rt.call('/contacts', { key })).json()) as { data: unknown[] }).data).toEqual([]);
    await context.close();
  });
});

describe('emails', () => {
  it('lists emails newest first, filters by recipient and status, and shows one with its events and deliveries', async () => {
    const { key, context, page } = await signedIn('Webhooks');
    await rt.call('/webhooks', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}/emails`, events: ['email.sent', 'email.delivered'] }),
    });
    for (const [to, subject] of [
      ['success@simulator.amazonses.com', 'First'],
      ['bounce@simulator.amazonses.com', 'Second'],
    ]) {
      await rt.call('/emails', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ from: 'Acme <hello@acme.test>', to: [to], subject, html: '<p>Hi</p>' }),
      });
    }
    await rt.settle();

    await page.getByRole('link', { name: 'Emails' }).click();
    await page.getByRole('table', { name: 'Emails, newest first' }).waitFor();
    const rows = await page.getByRole('table', { name: 'Emails, newest first' }).getByRole('row').allTextContents();
    expect(rows[1]).toContain('Second');
    expect(rows[2]).toContain('First');
    await expectAccessibleAndNarrow(browser, page);

    await page.getByLabel('Recipient').fill('success@simulator.amazonses.com');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/to=/);
    const filtered = await page.getByRole('table', { name: 'Emails, newest first' }).getByRole('row').allTextContents();
    expect(filtered).toHaveLength(2);
    await page.getByLabel('Status').selectOption('delivered');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=delivered/);
    expect(await page.getByRole('table', { name: 'Emails, newest first' }).getByRole('row').count()).toBe(2);

    await page.getByRole('table', { name: 'Emails, newest first' }).getByRole('link').first().click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Email: First');
    expect(await page.getByRole('region', { name: 'Events' }).textContent()).toContain('email.delivered');
    await page.getByRole('navigation', { name: 'Email' }).getByRole('link', { name: 'Webhook deliveries' }).click();
    const deliveries = page.getByRole('table', { name: 'Webhook deliveries of this email' }).getByRole('row');
    expect(await deliveries.count()).toBeGreaterThan(1);
    await expectAccessibleAndNarrow(browser, page);
    await context.close();
  });
});
