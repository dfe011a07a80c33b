// The dashboard end to end in Chromium: sign-in (the one-time link, then the session), the overview, API keys
// (created with every scope, shown once, gone after a reload; revoked) and webhooks (created with the event
// picker, the signing secret shown once). Every page is checked with axe and at phone width.
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectAccessibleAndNarrow, newPage, signIn, signInLink, useDashboardWorld } from '../support/browser';
import type { Receiver } from '../support/receiver';
import type { TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let browser: Browser;
let receiver: Receiver;
useDashboardWorld((world) => {
  ({ rt, browser, receiver } = world);
});

const main = (page: Page) => page.getByRole('main');

describe('sign-in', () => {
  it('signs in with the one-time link, shows the overview, and refuses the link a second time', async () => {
    // Arrange
    const { accountId } = await rt.newKey({ plan: 'growth' });
    const link = await signInLink(rt, accountId);
    const { context, page } = await newPage(browser);

    // Act
    await page.goto(link);
    await expectAccessibleAndNarrow(browser, page); // a GET: it never redeems the link
    await page.getByRole('button', { name: 'Sign in' }).click();

    // Assert
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    const overview = (await main(page).textContent()) ?? '';
    expect(overview).toContain('growth');
    expect(overview).toContain('100 requests per second');
    expect(overview).toMatch(/Live emails this month\s*0 of 50,000/);
    expect(overview).toMatch(/Test recipients today\s*0 of 50,000/);
    expect(await page.getByText(accountId).count()).toBe(1);
    const cookie = (await context.cookies()).find((c) => c.name.startsWith('sf_session_'));
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/v1/dashboard' });
    await expectAccessibleAndNarrow(browser, page);
    // The API reference is one link away, served with the API.
    await page.getByRole('link', { name: 'API reference' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/v1/reference');
    await expect.poll(() => page.locator('a[href="#op-sendEmail"]').count()).toBe(1);

    // A used link no longer offers to sign in at all.
    const { page: other } = await newPage(browser);
    await other.goto(link);
    await expect.poll(() => other.getByRole('heading', { level: 1 }).textContent()).toBe('Sign-in link not valid');
    expect(await other.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    expect(await other.content()).not.toContain(accountId);
    await context.close();
    await other.context().close();
  });

  it('shows no account data without a session, and signs out', async () => {
    const { accountId } = await rt.newKey();
    const { context, page } = await newPage(browser);

    const anonymous = await page.goto(`${rt.url}/dashboard/webhooks`);
    expect(anonymous?.status()).toBe(401);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign-in required');
    await expectAccessibleAndNarrow(browser, page);

    await signIn(page, rt, accountId);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Signed out');
    const after = await page.goto(`${rt.url}/dashboard`);
    expect(after?.status()).toBe(401);
    expect(await page.content()).not.toContain(accountId);
    await context.close();
  });

  it('switches between live and test mode', async () => {
    const { accountId } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId, 'test');

    await page.getByRole('button', { name: 'Switch to live mode' }).click();

    await expect.poll(() => page.getByRole('button', { name: 'Switch to test mode' }).count()).toBe(1);
    expect(await page.getByText('Live mode', { exact: true }).count()).toBe(1);
    await context.close();
  });
});

describe('API keys', () => {
  it('creates a key with every scope, shows it once with a copy button, then revokes it', async () => {
    const { accountId } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.getByRole('link', { name: 'API keys' }).click();

    await page.getByLabel('Name').fill('CI deploys');
    await page.getByRole('button', { name: 'Create key' }).click();

    const secret = (await page.locator('#secret-value').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^sf_test_[0-9A-Za-z]{32,}$/);
    expect(await page.getByRole('button', { name: 'Copy' }).count()).toBe(1);
    // The key works on the API, with every scope (a full-access route answers).
    expect((await rt.call('/api-keys', { key: secret })).status).toBe(200);
    const row = page.getByRole('row', { name: /CI deploys/ });
    expect(await row.textContent()).toContain('email:send, email:read, domain:read, webhook:read, webhook:write');
    expect(await row.textContent()).not.toContain(secret);
    await expectAccessibleAndNarrow(browser, page);

    await page.reload();
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('link', { name: 'Revoke CI deploys' }).click();
    await page.getByRole('button', { name: 'Revoke CI deploys' }).click(); // on its confirmation page
    await expect.poll(() => page.getByRole('status').textContent()).toContain('revoked');
    expect((await rt.call('/api-keys', { key: secret })).status).toBe(401);
    await context.close();
  });

  it('creates a key with only the scopes picked', async () => {
    const { accountId } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.goto(`${rt.url}/dashboard/api-keys`);

    await page.getByLabel('Name').fill('Sender only');
    for (const scope of ['email:read', 'domain:read', 'webhook:read', 'webhook:write']) {
      await page.getByRole('checkbox', { name: scope }).uncheck();
    }
    await page.getByRole('button', { name: 'Create key' }).click();

    const secret = (await page.locator('#secret-value').textContent())?.trim() ?? '';
    expect((await rt.call('/webhooks', { key: secret })).status).toBe(403);
    expect(await page.getByRole('row', { name: /Sender only/ }).textContent()).toContain('email:send');
    await context.close();
  });
});

describe('API keys: a refused form', () => {
  it('with no scope ticked, says so in plain words under the scopes, and makes no key', async () => {
    const { accountId, key } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.goto(`${rt.url}/dashboard/api-keys`);

    await page.getByLabel('Name').fill('Nothing');
    for (const scope of ['email:send', 'email:read', 'domain:read', 'webhook:read', 'webhook:write']) {
      await page.getByRole('checkbox', { name: scope }).uncheck();
    }
    await page.getByRole('button', { name: 'Create key' }).click();

    const words = 'Scopes must list at least one scope.';
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(words);
    const scopes = page.getByRole('group', { name: /Scopes/ });
    expect(await scopes.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${await scopes.getAttribute('aria-describedby')}`).textContent()).toBe(words);
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBeNull();
    await expectAccessibleAndNarrow(browser, page);
    const keys = (await (await rt.call('/api-keys', { key })).json()) as { data: unknown[] };
    expect(keys.data).toHaveLength(1);
    await context.close();
  });
});

describe('webhooks', () => {
  it('lists webhooks and creates one with the event picker, format and description, showing the secret once', async () => {
    const { accountId, key } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await expect.poll(() => main(page).textContent()).toContain('No webhooks in test mode yet.');
    await expectAccessibleAndNarrow(browser, page);

    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/hooks`);
    await page.getByRole('checkbox', { name: 'email.bounced' }).uncheck();
    await page.getByRole('checkbox', { name: 'email.complained' }).check();
    await page.getByLabel('Format').selectOption('standard');
    await page.getByLabel('Description (optional)').fill('Orders service');
    await page.getByRole('button', { name: 'Create webhook' }).click();

    const secret = (await page.locator('#secret-value').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^whsec_/);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain(`${receiver.url}/hooks`);
    const list = (await (await rt.call('/webhooks', { key })).json()) as { data: { id: string; events: string[] }[] };
    expect(list.data).toHaveLength(1);
    expect(list.data[0]?.events).toEqual(['email.delivered', 'email.complained']);
    await expectAccessibleAndNarrow(browser, page);

    await page.reload();
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await expect.poll(() => page.getByRole('link', { name: `${receiver.url}/hooks` }).count()).toBe(1);
    await context.close();
  });

  it('shows the API error message when creation is refused', async () => {
    const { accountId } = await rt.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.goto(`${rt.url}/dashboard/webhooks`);

    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/none`);
    for (const name of ['email.delivered', 'email.bounced']) await page.getByRole('checkbox', { name }).uncheck();
    await page.getByRole('button', { name: 'Create webhook' }).click();

    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/event/i);
    await context.close();
  });
});
