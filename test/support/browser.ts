// Browser tests: a Chromium (system or npm-shipped, bin/chromium.ts) driven by playwright-core (one browser per test file, reused), signed in
// to the dashboard with the same use case the admin CLI uses, and axe-core injected for accessibility checks.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { launchChromium } from '../../bin/chromium';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
import type { Mode } from '../../lambdas/domain/api-keys';
import { type Receiver, startReceiver } from './receiver';
import { startTestRuntime, type TestRuntime } from './runtime';

/** Bounded waits: a page that does not answer in this fails the test instead of hanging it. */
const WAIT_MS = 15_000;

export interface DashboardWorld {
  readonly rt: TestRuntime;
  readonly browser: Browser;
  readonly receiver: Receiver;
}

/**
 * One runtime (with `env`), one browser and one webhook receiver per test file: started before its tests,
 * handed to `started`, stopped after them. A browser and a runtime start per file, and pages load under the
 * whole suite's load: roomier time limits than unit tests.
 */
export function useDashboardWorld(started: (world: DashboardWorld) => void, env: Record<string, string> = {}): void {
  vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000, expect: { poll: { timeout: 15_000 } } });
  let world: Partial<DashboardWorld> = {};
  beforeAll(async () => {
    const [rt, browser, receiver] = await Promise.all([startTestRuntime(env), launchChromium(), startReceiver()]);
    world = { rt, browser, receiver };
    started({ rt, browser, receiver });
  });
  afterAll(async () => {
    await world.browser?.close();
    await world.receiver?.close();
    await world.rt?.stop();
  });
}

/** A new browser context (its own cookies) at desktop width, with bounded waits. */
export async function newPage(browser: Browser, width = 1100): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  context.setDefaultTimeout(WAIT_MS);
  context.setDefaultNavigationTimeout(WAIT_MS);
  return { context, page: await context.newPage() };
}

/** A one-time link, exactly as `npm run admin -- dashboard-link` makes it. */
export async function signInLink(rt: TestRuntime, accountId: string, mode: Mode = 'test'): Promise<string> {
  const { url } = await createSignInLink(rt.services, { accountId, mode, baseUrl: rt.url });
  return url;
}

/** Opens a sign-in link and presses the button, as a person does; lands on the overview. */
export async function signIn(page: Page, rt: TestRuntime, accountId: string, mode: Mode = 'test'): Promise<void> {
  await page.goto(await signInLink(rt, accountId, mode));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1, name: 'Overview' }).count()).toBe(1);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's source, for a context that loads it into every page itself (`context.addInitScript`). */
export const AXE_SOURCE = axeSource;

/**
 * axe-core on the current page: the serious and critical violations (expected to be none). `loaded`: the page
 * has axe already (an init script), so it is not injected again.
 */
export async function seriousViolations(page: Page, loaded = false): Promise<string[]> {
  if (!loaded) await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    // Only violations are read: axe skips detailing what passed (the same violations, found faster).
    return (await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] }))
      .violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** At 375 px the page must not scroll sideways. */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

/**
 * The page passes axe (no serious or critical violation) and fits a 375 px phone screen. CSP forbids inline
 * scripts, so axe goes in through a fresh context whose CSP checks are bypassed for this check only.
 */
export async function expectAccessibleAndNarrow(browser: Browser, page: Page): Promise<void> {
  const url = page.url();
  const cookies = await page.context().cookies();
  const context = await browser.newContext({ viewport: { width: 375, height: 800 }, bypassCSP: true });
  try {
    context.setDefaultTimeout(WAIT_MS);
    await context.addCookies(cookies);
    const phone = await context.newPage();
    await phone.goto(url);
    expect(await horizontalOverflow(phone), `horizontal scroll at 375 px on ${url}`).toBeLessThanOrEqual(0);
    expect(await seriousViolations(phone), `axe on ${url}`).toEqual([]);
  } finally {
    await context.close();
  }
}
