// What the dashboard tells and guards (issue 17 item 3), in Chromium against a real receiver: destructive
// actions take a confirmation page (one click never revokes or deletes), the contact's confirmation link is
// shown, a failing endpoint's health badge and figures, an attempt's request and response headers, attempts
// counted truly after a manual retry, the email's id, tags and sandboxed preview, and words that never break
// mid-token at 375 px. Retries are 0.2 s apart here, so five automatic attempts end within a second or two.
import type { Browser, Locator, Page } from 'playwright-core';
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
  { SF_RETRY_DELAYS: '0.2,0.2,0.2,0.2' },
);

const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});
const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
const flash = (page: Page, role: 'status' | 'alert') => page.getByRole(role).first().textContent();
/** Opens one of the email page's tabs (each its own view). */
const emailTab = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Email' }).getByRole('link', { name, exact: true }).click();

/**
 * Waits for the page a form's redirect lands on to show a status flash containing `text`. Fails at once, with
 * what the page says instead, when it shows an alert (so a failure tells why, not only "timeout").
 */
async function expectStatus(page: Page, text: string): Promise<string> {
  let seen = '';
  await expect
    .poll(
      async () => {
        const [status, alert] = await Promise.all([
          page.getByRole('status').allTextContents(),
          page.getByRole('alert').allTextContents(),
        ]);
        if (alert.length) throw new Error(`${page.url()} shows an alert: ${alert.join(' | ')}`);
        seen = status.join(' | ') || `${page.url()}: ${(await page.locator('body').innerText()).slice(0, 300)}`;
        return seen;
      },
      { timeout: 30_000 },
    )
    .toContain(text);
  return seen;
}

/** How many lines an element's text takes (distinct tops of its text's line boxes). */
async function lines(locator: Locator): Promise<number> {
  return locator.evaluate((element) => {
    const doc = element.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(element);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  });
}

describe('destructive actions', () => {
  it('a one-click revoke does not revoke: the confirmation page names the key, its button revokes', async () => {
    const { accountId, key } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.getByRole('link', { name: 'API keys' }).click();

    await page
      .getByRole('link', { name: /^Revoke / })
      .first()
      .click();
    await expect.poll(() => heading(page)).toMatch(/^Revoke key .+\?$/);
    expect(await page.getByRole('main').textContent()).toContain(key.slice(-4));
    expect((await rt.call('/usage', { key })).status).toBe(200);
    await expectAccessibleAndNarrow(browser, page);

    // The act's POST without the confirmation (what the old one-click form sent) only leads to the page.
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const action = await page.locator('form:has(input[name=confirm])').getAttribute('action');
    const unconfirmed = await context.request.post(`${new URL(rt.url).origin}${action}`, {
      form: { csrf },
      headers: { Origin: new URL(rt.url).origin, 'Sec-Fetch-Site': 'same-origin' },
      maxRedirects: 0,
    });
    expect(unconfirmed.status()).toBe(303);
    expect(unconfirmed.headers().location).toBe(action);
    expect((await rt.call('/usage', { key })).status).toBe(200);

    await page
      .getByRole('button', { name: /^Revoke / })
      .first()
      .click();
    await expect.poll(() => flash(page, 'status')).toMatch(/revoked/);
    expect((await rt.call('/usage', { key })).status).toBe(401);
    await context.close();
  });

  // Three tests, each its own account and browser context. They were retried once: a status flash sometimes
  // missed the page a form's redirect landed on, because any dashboard GET opened and cleared the flash cookie.
  // A flash now names its page and only that page clears it (test/integration/dashboard-auth.test.ts).
  it('deleting a webhook takes its confirmation page', async () => {
    const { accountId, key } = await rt.newKey();
    const hook = (await (
      await rt.call('/webhooks', { key, ...json({ url: `${receiver.url}/del`, events: ['email.sent'] }) })
    ).json()) as { id: string };
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    await page.goto(`${rt.url}/dashboard/webhooks/${hook.id}/settings`);
    await page.getByRole('link', { name: 'Delete webhook' }).click();
    await expect.poll(() => heading(page)).toBe('Delete this webhook?');
    expect((await rt.call(`/webhooks/${hook.id}`, { key })).status).toBe(200);
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Webhook deleted.');
    expect((await rt.call(`/webhooks/${hook.id}`, { key })).status).toBe(404);

    await context.close();
  });

  it('deleting a domain takes its confirmation page; DNS names wrap only after a dot', async () => {
    const { accountId } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    await page.goto(`${rt.url}/dashboard/domains`);
    await page.getByLabel('Domain name').fill('mail.confirm-test.example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect.poll(() => heading(page)).toBe('Domain mail.confirm-test.example');
    // The record type and names never break inside a token at phone width.
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await lines(page.getByRole('cell', { name: 'CNAME' }).first())).toBe(1);
    const recordName = page.locator('.dns-name code').first();
    expect(await recordName.textContent()).toMatch(/\._domainkey\./);
    // Each label (with its dot) sits on one line: a name wraps only after a dot.
    const linesPerLabel = await recordName.evaluate((element) =>
      [...element.childNodes]
        .filter((node) => node.nodeType === 3 && node.textContent)
        .map((node) => {
          const range = element.ownerDocument.createRange();
          range.selectNodeContents(node);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        }),
    );
    expect(linesPerLabel.length).toBeGreaterThan(2);
    expect(linesPerLabel.every((n) => n === 1)).toBe(true);
    await page.setViewportSize({ width: 1100, height: 900 });
    await page.getByRole('link', { name: 'Delete domain' }).click();
    await expect.poll(() => heading(page)).toBe('Delete domain mail.confirm-test.example?');
    await page.getByRole('button', { name: 'Delete mail.confirm-test.example' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Domain deleted.');

    await context.close();
  });

  it('adding a contact shows its confirmation link; deleting it takes its confirmation page', async () => {
    const { accountId, key } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    await page.goto(`${rt.url}/dashboard/contacts`);
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByRole('button', { name: 'Add contact' }).click();
    // Polled: the flash is read from the page the form's redirect lands on, not the one it was sent from.
    expect(await expectStatus(page, 'Sendflow sends no confirmation email')).not.toContain('a confirmation email asks');
    expect((await page.locator('#secret-value').textContent())?.trim()).toMatch(/\/v1\/contacts\/confirm\//);
    await page.getByRole('link', { name: 'Delete ada@example.com' }).click();
    await expect.poll(() => heading(page)).toBe('Delete this contact?');
    const listed = (await (await rt.call('/contacts', { key })).json()) as { data: unknown[] };
    expect(listed.data).toHaveLength(1);
    await page.getByRole('button', { name: 'Delete ada@example.com' }).click();
    await expectStatus(page, 'Contact deleted.');
    await context.close();
  });
});

describe('a failing endpoint', () => {
  it('shows Failing with its figures, the attempt exchange, true attempt counts, and the email itself', async () => {
    const { accountId, key } = await rt.newKey();
    const made = await rt.call('/webhooks', {
      key,
      ...json({ url: `${receiver.url}/failing`, events: ['email.sent'] }),
    });
    const hook = (await made.json()) as { id: string };
    receiver.answer({ kind: 'status', status: 503, body: 'down for maintenance' });
    const sent = await rt.call('/emails', {
      key,
      ...json({
        from: 'Acme <hello@acme.test>',
        to: ['success@simulator.amazonses.com'],
        subject: 'Your receipt',
        html: '<h1 style="color:#333">Thanks</h1><script>document.title="ran"</script><p>Receipt body</p>',
        text: 'Thanks. Receipt body.',
        tags: [{ name: 'category', value: 'receipt' }],
      }),
    });
    const { id: emailId } = (await sent.json()) as { id: string };
    // The email.sent delivery fails five times (0.2 s apart) and ends failed.
    await expect
      .poll(
        async () => {
          const log = (await (await rt.call(`/webhooks/${hook.id}/deliveries`, { key })).json()) as {
            data: { attempts: number; status: string }[];
          };
          return log.data.some((d) => d.attempts === 5 && d.status === 'failed');
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    // Health on the list, as the webhook object gives it: Failing, 0% success, the last failure's time.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const row = page.getByRole('row', { name: new RegExp(`${receiver.url}/failing`) });
    expect(await row.textContent()).toContain('Failing');
    expect(await row.textContent()).not.toContain('Active');
    expect(await row.textContent()).toContain('0%');
    expect(await row.textContent()).toMatch(/\d\d:\d\d:\d\d UTC/);
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await lines(row.locator('.health'))).toBe(1);
    await page.setViewportSize({ width: 1100, height: 900 });
    await expectAccessibleAndNarrow(browser, page);

    // And on its page.
    await page.getByRole('link', { name: `${receiver.url}/failing` }).click();
    const facts = (await page.locator('dl.facts').first().textContent()) ?? '';
    expect(facts).toContain('Failing');
    expect(facts).toContain('0%');
    await page.getByRole('navigation', { name: 'Webhook' }).getByRole('link', { name: 'Deliveries' }).click();
    const logRow = page
      .getByRole('table', { name: /^Deliveries/ })
      .getByRole('row')
      .nth(1);
    expect(await logRow.textContent()).toContain('503');

    // The delivery: the latest attempt's request and response, then a manual retry counted as such.
    await logRow.getByRole('link').click();
    await expect.poll(() => heading(page)).toMatch(/^Delivery dlv_/);
    const exchange = page.getByRole('region', { name: 'Latest attempt: request and response' });
    const text = (await exchange.textContent()) ?? '';
    expect(text).toContain(`POST ${receiver.url}/failing`);
    expect(text).toMatch(/webhook-signature/i);
    expect(text).toContain('HTTP 503');
    expect(await exchange.getByLabel('Response headers').textContent()).toContain('text/plain');
    expect(text).toContain('down for maintenance');
    expect(await page.locator('dl.facts').textContent()).toContain('5 attempts (at most 5 scheduled)');
    await expectAccessibleAndNarrow(browser, page);
    receiver.answer({ kind: 'status', status: 200, body: 'ok' });
    await page.getByRole('button', { name: 'Retry now' }).click();
    await expect.poll(() => flash(page, 'status')).toContain('Retry:');
    const counted = (await page.locator('dl.facts').textContent()) ?? '';
    expect(counted).toContain('6 attempts (5 scheduled + 1 manual)');
    expect(counted).not.toContain('6 of 5');

    // The email: id, tags, the HTML in a sandboxed frame (no script ran), the text part.
    await page.goto(`${rt.url}/dashboard/emails/${emailId}`);
    expect(await page.locator('#email-id').textContent()).toBe(emailId);
    expect(await page.locator('dl.facts').textContent()).toContain('category: receipt');
    await emailTab(page, 'Content');
    const frame = page.frameLocator('iframe.preview');
    await expect.poll(() => frame.locator('p').textContent()).toBe('Receipt body');
    expect(await page.locator('iframe.preview').getAttribute('sandbox')).toBe('');
    const preview = await context.request.get(`${rt.url}/dashboard/emails/${emailId}/preview`);
    expect(preview.headers()['content-security-policy']).toMatch(/^sandbox;/);
    expect(await frame.locator('title').count()).toBe(0);
    expect(await page.locator('#text-body').textContent()).toBe('Thanks. Receipt body.');
    await emailTab(page, 'Webhook deliveries');
    const deliveries =
      (await page.getByRole('table', { name: 'Webhook deliveries of this email' }).textContent()) ?? '';
    expect(deliveries).toContain(`${receiver.url}/failing`);
    await expectAccessibleAndNarrow(browser, page);
    await context.close();
  });
});

describe('attachments', () => {
  it('the email page lists its attachments (name, size, type) with download links that give the file', async () => {
    const { accountId, key } = await rt.newKey();
    const pdf = Buffer.from('%PDF-1.4 invoice body');
    const sent = await rt.call('/emails', {
      key,
      ...json({
        from: 'Acme <hello@acme.test>',
        to: 'ada@example.com',
        subject: 'Invoice',
        html: '<p><img src="cid:logo">Invoice</p>',
        attachments: [
          { filename: 'invoice 42.pdf', content: pdf.toString('base64') },
          { filename: 'logo.png', content: Buffer.alloc(1500).toString('base64'), content_id: 'logo' },
        ],
      }),
    });
    const { id: emailId } = (await sent.json()) as { id: string };
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    await page.goto(`${rt.url}/dashboard/emails/${emailId}`);
    await emailTab(page, 'Content');
    const table = page.getByRole('table', { name: /^Attachments/ });
    const rows = table.getByRole('row');
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(1).textContent()).toMatch(/invoice 42\.pdf.*21 bytes.*application\/pdf/s);
    expect(await rows.nth(2).textContent()).toMatch(/logo\.png.*inline: logo.*1\.5 KB.*image\/png/s);
    const link = page.getByRole('link', { name: 'Download invoice 42.pdf' });
    const download = await context.request.get((await link.getAttribute('href')) ?? '');
    expect(download.status()).toBe(200);
    expect(download.headers()['content-disposition']).toContain('attachment;');
    expect(Buffer.from(await download.body()).equals(pdf)).toBe(true);
    await expectAccessibleAndNarrow(browser, page);
    await context.close();
  });
});

describe('API requests', () => {
  it("lists the requests just made with the account's keys, with the key's hint, and none of its own pages", async () => {
    const { accountId, key } = await rt.newKey();
    await rt.call('/emails/em_nope', { key });
    await rt.call('/webhooks', { key, ...json({ url: `${receiver.url}/log`, events: ['email.sent'] }) });
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    await page.getByRole('link', { name: 'API requests' }).click();

    await expect.poll(() => heading(page)).toBe('API requests');
    const rows = await page
      .getByRole('table', { name: 'API requests, newest first' })
      .getByRole('row')
      .allTextContents();
    expect(rows).toHaveLength(3); // the header and the two requests: the dashboard's own calls are not listed
    expect(rows[1]).toMatch(/POST\s*\/webhooks\s*201/);
    expect(rows[2]).toMatch(/GET\s*\/emails\/em_nope\s*404/);
    expect(rows[1]).toContain(key.slice(-4));
    expect(await page.content()).not.toContain(key);
    await expectAccessibleAndNarrow(browser, page);

    // A row opens the request: its detail page, with the response body, is accessible and fits 375 px too
    await page.getByRole('table', { name: 'API requests, newest first' }).getByRole('link').first().click();
    await expect.poll(() => heading(page)).toBe('POST /webhooks 201');
    expect(await page.getByRole('heading', { name: 'Response body' }).count()).toBe(1);
    await expectAccessibleAndNarrow(browser, page);
    await context.close();
  });
});
