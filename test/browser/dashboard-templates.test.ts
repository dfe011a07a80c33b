// Templates in the dashboard, end to end in Chromium: the list (name, alias, status), one template with its
// variables, and the preview of its draft with sample values typed into the form: the subject and text as
// rendered, the HTML in a sandboxed frame with the values HTML-escaped (no script of a value runs), a missing
// value named as a send would name it; accessible and narrow.
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectAccessibleAndNarrow, newPage, signIn, useDashboardWorld } from '../support/browser';
import type { TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let browser: Browser;
useDashboardWorld((world) => {
  ({ rt, browser } = world);
});

describe('templates', () => {
  it('lists templates and previews one with sample values', async () => {
    // Arrange: a published template and a draft, made through the API.
    const { accountId, key } = await rt.newKey();
    const create = async (body: Record<string, unknown>) =>
      (
        (await (await rt.call('/templates', { method: 'POST', key, body: JSON.stringify(body) })).json()) as {
          id: string;
        }
      ).id;
    const id = await create({
      name: 'Order confirmation',
      alias: 'order',
      subject: 'Your {{{PRODUCT}}}',
      html: '<h1 id="greeting">Hi {{{NAME}}}</h1><p>{{{PRODUCT}}} for {{{PRICE}}}</p>',
      text: 'Hi {{{NAME}}}',
      variables: [
        { key: 'NAME', type: 'string', fallback_value: 'there' },
        { key: 'PRODUCT', type: 'string' },
        { key: 'PRICE', type: 'number', fallback_value: 25 },
      ],
    });
    await rt.call(`/templates/${id}/publish`, { method: 'POST', key });
    await create({ name: 'Draft only', html: '<p>x</p>' });
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);

    // Act: the list, then the template.
    await page.getByRole('link', { name: 'Templates' }).click();
    const row = page.getByRole('row', { name: /Order confirmation/ });
    expect(await row.textContent()).toContain('order');
    expect(await row.textContent()).toContain('published');
    expect(await page.getByRole('row', { name: /Draft only/ }).textContent()).toContain('draft');
    await expectAccessibleAndNarrow(browser, page);
    await page.getByRole('link', { name: 'Order confirmation' }).click();

    // Assert: the samples start as the fallbacks, or the key itself for a required variable.
    expect(await page.locator('#template-status').textContent()).toContain('Published');
    expect(await page.getByRole('table', { name: 'Variables' }).textContent()).toContain('none (required)');
    expect(await page.locator('#preview-subject').textContent()).toBe('Your PRODUCT');
    expect(await page.getByLabel('NAME (string)').inputValue()).toBe('there');

    // Sample values, one hostile: rendered escaped, in the sandboxed frame.
    await page.getByLabel('NAME (string)').fill('<script>parent.document.title="pwned"</script>Ada');
    await page.getByLabel('PRODUCT (string)').fill('Vintage Mac');
    await page.getByLabel('PRICE (number)').fill('499');
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.locator('#preview-subject').textContent()).toBe('Your Vintage Mac');
    expect(await page.locator('#preview-text').textContent()).toBe(
      'Hi <script>parent.document.title="pwned"</script>Ada',
    );
    const frame = page.frameLocator('iframe.preview');
    await expect
      .poll(() => frame.locator('#greeting').textContent())
      .toBe('Hi <script>parent.document.title="pwned"</script>Ada');
    expect(await frame.locator('p').textContent()).toBe('Vintage Mac for 499');
    expect(await frame.locator('script').count()).toBe(0);
    expect(await page.title()).not.toContain('pwned');
    await expectAccessibleAndNarrow(browser, page);

    // A number left empty is no number: named, as a send would name it.
    await page.getByLabel('PRICE (number)').fill('');
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('PRICE is a number variable');
    await context.close();
  });

  it("an email sent by a template links to it from the email's page", async () => {
    const { accountId, key } = await rt.newKey();
    const post = async (path: string, body?: unknown) =>
      (await (
        await rt.call(path, { method: 'POST', key, ...(body ? { body: JSON.stringify(body) } : {}) })
      ).json()) as { id: string };
    const { id } = await post('/templates', { name: 'Hello', subject: 'Hello', html: '<p>Hi {{{N}}}</p>' });
    await post(`/templates/${id}/publish`);
    const email = await post('/emails', {
      from: 'a@acme.example',
      to: 'success@simulator.amazonses.com',
      template: { id, variables: { N: 'Ada' } },
    });
    const { context, page } = await newPage(browser);
    await signIn(page, rt, accountId);
    await page.goto(`${rt.url}/dashboard/emails/${email.id}`);
    await page.getByRole('link', { name: id }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Template: Hello');
    await context.close();
  });
});
