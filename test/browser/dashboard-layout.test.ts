// Every dashboard page fits, at a laptop's width and a phone's: one seeded account (bin/dashboard-tour.ts), one
// browser, each page at 1280 px and 375 px: no sideways scroll of the document, no element outside the viewport
// (a table's or a code block's own scroll frame may hold wider content; the frame itself must fit), every input
// and select of one height, URLs and DNS names broken only at a token boundary (after . / : ? & = - _ @), and
// axe-core clean.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { seedTour, TOUR_WIDTHS, type TourPage, tourPages } from '../../bin/dashboard-tour';
import type { DashboardWorld } from '../support/browser';
import { AXE_SOURCE, seriousViolations, signIn, useDashboardWorld } from '../support/browser';

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

async function check(page: Page, target: TourPage, width: number) {
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
});
