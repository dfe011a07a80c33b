// Every dashboard page fits, at a laptop's width and a phone's: one seeded account (bin/dashboard-tour.ts), one
// browser, each page at 1280 px and 375 px: no sideways scroll of the document, no element outside the viewport
// (a table's or a code block's own scroll frame may hold wider content; the frame itself must fit), every input
// and select of one height, URLs and DNS names broken only at a token boundary (after . / : ? & = - _ @), and
// axe-core clean.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { seedTour, TINY_PNG, TOUR_WIDTHS, type TourPage, tourPages } from '../../bin/dashboard-tour';
import type { DashboardWorld } from '../support/browser';
import { AXE_SOURCE, newPage, seriousViolations, signIn, useDashboardWorld } from '../support/browser';
import { RawSmtp } from '../support/smtp-client';

let world: DashboardWorld;
useDashboardWorld((started) => {
  world = started;
});

/** Runs in the page (plain JavaScript: this project's types have no DOM): what the layout does wrong. */
const INSPECT = readFileSync(join(import.meta.dirname, '..', 'support', 'layout-inspect.js'), 'utf8');

interface LayoutReport {
  overflow: number;
  outside: string[];
  heights: Record<string, number>;
  brokenTokens: string[];
}

async function check(page: Page, target: Pick<TourPage, 'name'>, width: number) {
  const report = (await page.evaluate(INSPECT)) as LayoutReport;
  const where = `${target.name} at ${width} px`;
  expect(report.overflow, `horizontal scroll on ${where}`).toBeLessThanOrEqual(0);
  expect(report.outside, `elements outside the viewport on ${where}`).toEqual([]);
  expect(
    new Set(Object.values(report.heights)).size,
    `input heights on ${where}: ${JSON.stringify(report.heights)}`,
  ).toBeLessThanOrEqual(1);
  expect([...new Set(report.brokenTokens)], `tokens broken inside on ${where}`).toEqual([]);
  expect(await seriousViolations(page, true), `axe on ${where}`).toEqual([]);
}

describe('the dashboard layout', () => {
  it('fits every page at 1280 px and 375 px: no sideways scroll, one input height, unbroken tokens, axe clean', async () => {
    const { rt, browser, receiver } = world;
    receiver.answer({ kind: 'status', status: 200, body: 'ok' });
    const { accountId, key, keyId } = await rt.newKey();
    const ids = await seedTour(rt.url, key, receiver.url, keyId);
    await rt.settle();
    // axe goes into every page as an init script: this context lets it past the page's CSP (the CSP itself is
    // tested elsewhere).
    const context = await browser.newContext({ viewport: { width: TOUR_WIDTHS[0], height: 900 }, bypassCSP: true });
    context.setDefaultTimeout(15_000);
    await context.addInitScript({ content: AXE_SOURCE });
    const page = await context.newPage();
    await signIn(page, rt, accountId);
    for (const target of tourPages(ids)) {
      await page.setViewportSize({ width: TOUR_WIDTHS[0], height: 900 });
      const response = await page.goto(`${rt.url}/dashboard${target.path ? `/${target.path}` : ''}`);
      expect(response?.status(), target.name).toBe(200);
      // Each width in turn, on the same page: the layout reflows as a resized window does.
      for (const width of TOUR_WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        await check(page, target, width);
      }
    }
    await context.close();
  });

  it('fits the received-email pages (inbound, live mode) at 1280 px and 375 px, axe clean; its preview shows the inline image', async () => {
    const { rt, browser } = world;
    // Receiving is live-mode only: a live account, a verified receiving domain, one message over SMTP with an
    // HTML body, an inline image and a file.
    const { key, accountId } = await rt.newKey({ mode: 'live' });
    const post = (path: string, body: unknown) => rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });
    const domain = (await (
      await post('/domains', { name: 'inbound.acme-tour.example', capabilities: { receiving: 'enabled' } })
    ).json()) as { id: string };
    await post(`/domains/${domain.id}/verify`, {});
    const { client } = await RawSmtp.open(rt.smtpPort);
    await client.send('ada@customer-of-acme.example', ['support@inbound.acme-tour.example'], RECEIVED_MESSAGE);
    client.close();
    await rt.inbound.idle();
    const listed = (await (await rt.call('/emails/receiving', { key })).json()) as { data: { id: string }[] };
    const id = listed.data[0]?.id ?? '';
    expect(id).toMatch(/^rcv_/);
    const context = await browser.newContext({ viewport: { width: TOUR_WIDTHS[0], height: 900 }, bypassCSP: true });
    context.setDefaultTimeout(15_000);
    await context.addInitScript({ content: AXE_SOURCE });
    const page = await context.newPage();
    await signIn(page, rt, accountId, 'live');
    for (const target of [
      { name: 'received', path: 'received' },
      { name: 'received-email', path: `received/${id}` },
    ]) {
      await page.setViewportSize({ width: TOUR_WIDTHS[0], height: 900 });
      const response = await page.goto(`${rt.url}/dashboard/${target.path}`);
      expect(response?.status(), target.name).toBe(200);
      for (const width of TOUR_WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        await check(page, target, width);
      }
    }
    await context.close();

    // Under the page's real CSP (no bypass): the preview frame shows the attached 1×1 PNG, not a placeholder.
    const plain = await newPage(browser);
    await signIn(plain.page, rt, accountId, 'live');
    await plain.page.goto(`${rt.url}/dashboard/received/${id}`);
    const image = plain.page.frameLocator('iframe.preview').locator('img').first();
    await expect.poll(() => image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);
    expect(await image.getAttribute('src')).toBe(`data:image/png;base64,${TINY_PNG}`);
    await plain.context.close();
  });
});

/** A received message as a person's mail client sends one: HTML with an inline image, text, and a PDF. */
const RECEIVED_MESSAGE = [
  'From: Ada Lovelace <ada@customer-of-acme.example>',
  'To: Acme Support <support@inbound.acme-tour.example>',
  'Subject: Question about order 1042 (https://shop.acme-tour.example/orders/1042?ref=mail)',
  'Content-Type: multipart/mixed; boundary="mixed"',
  '',
  '--mixed',
  'Content-Type: multipart/related; boundary="related"',
  '',
  '--related',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p><img src="cid:logo@acme" alt="Acme" width="120" height="40"></p><p>Hello, where is order 1042?</p>',
  '--related',
  'Content-Type: image/png; name="logo.png"',
  'Content-Transfer-Encoding: base64',
  'Content-ID: <logo@acme>',
  'Content-Disposition: inline; filename="logo.png"',
  '',
  TINY_PNG,
  '--related--',
  '--mixed',
  'Content-Type: application/pdf; name="invoice-1042.pdf"',
  'Content-Disposition: attachment; filename="invoice-1042.pdf"',
  '',
  '%PDF-1.4 invoice',
  '--mixed--',
  '',
].join('\r\n');
