// The local session cookie is bound to its runtime and to its session, in Chromium's real cookie jar: cookies do
// not isolate ports, so a page on any port of 127.0.0.1 can set a cookie the dashboard's port receives. Two
// runtimes on two ports, and an attacker who holds an account on the victim's runtime: the attacker learns the
// name of their own session cookie (their browser shows it) and plants their session from a page on another port.
// The victim's dashboard must never show the attacker's account, and a cookie another runtime set is never read.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newPage, signIn, useDashboardWorld } from '../support/browser';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let browser: Browser;
useDashboardWorld((world) => {
  ({ rt, browser } = world);
});

/** Another runtime, on another port of the same host. */
let other: TestRuntime;
/** The attacker's page, on a third port: it answers with whatever Set-Cookie it is told to. */
let attackerPage: Server;
let attackerUrl = '';
let plant: string[] = [];
beforeAll(async () => {
  other = await startTestRuntime();
  attackerPage = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html', 'Set-Cookie': plant }).end('<p>Nothing to see.</p>');
  });
  await new Promise<void>((resolve) => attackerPage.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attackerPage.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  attackerPage?.closeAllConnections();
  await new Promise<void>((resolve) => (attackerPage ? attackerPage.close(() => resolve()) : resolve()));
  await other?.stop();
});

/** The dashboard's overview as the page shows it: its status and text. */
async function overview(page: Page, runtime: TestRuntime): Promise<{ status: number; text: string }> {
  const res = await page.goto(`${runtime.url}/dashboard`);
  return { status: res?.status() ?? 0, text: (await page.textContent('body')) ?? '' };
}

describe('the local session cookie, bound to its runtime and its session', () => {
  it("a session planted from another port never shows the attacker's account to a signed-in victim", async () => {
    // Arrange: the attacker signs in to the victim's runtime with an account of their own, and reads the session
    // cookie (name and value) from their own browser, as anyone can.
    const victim = await rt.newKey();
    const attacker = await rt.newKey();
    const { context: attackerContext, page: attackerBrowser } = await newPage(browser);
    await signIn(attackerBrowser, rt, attacker.accountId);
    const stolen = (await attackerContext.cookies()).find((c) => c.name.startsWith('sf_session'));
    if (!stolen) throw new Error('no session cookie');
    plant = [`${stolen.name}=${stolen.value}; Path=/v1/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict`];
    const { context, page } = await newPage(browser);
    await signIn(page, rt, victim.accountId);

    // Act: the victim opens the attacker's page on another port, then their dashboard again, twice.
    await page.goto(attackerUrl);
    const planted = (await context.cookies()).filter((c) => c.name.startsWith('sf_session')).length;
    const after = await overview(page, rt);
    const reloaded = await overview(page, rt);

    // Assert: the planted cookie sat beside the victim's (its name is its session's, not the runtime's), and the
    // dashboard trusted neither: signed out (the price of an ambiguous jar), never the attacker's account, and
    // both cleared, so the planted one does not sign the victim in as the attacker afterwards.
    expect(planted).toBe(2);
    expect(after.status).toBe(401);
    expect(after.text).toContain('may have planted one');
    expect(after.text).not.toContain(attacker.accountId);
    expect(reloaded.status).toBe(401);
    expect(reloaded.text).not.toContain(attacker.accountId);
    expect((await context.cookies()).filter((c) => c.name.startsWith('sf_session'))).toEqual([]);
    await context.close();
    await attackerContext.close();
  });

  it('the victim signs in again at once: the planted session was cleared with theirs', async () => {
    // Arrange: as above, the attacker's session planted in a signed-in victim's browser.
    const victim = await rt.newKey();
    const attacker = await rt.newKey();
    const { context: attackerContext, page: attackerBrowser } = await newPage(browser);
    await signIn(attackerBrowser, rt, attacker.accountId);
    const stolen = (await attackerContext.cookies()).find((c) => c.name.startsWith('sf_session'));
    if (!stolen) throw new Error('no session cookie');
    plant = [`${stolen.name}=${stolen.value}; Path=/v1/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict`];
    const { context, page } = await newPage(browser);
    await signIn(page, rt, victim.accountId);
    await page.goto(attackerUrl);
    await overview(page, rt);

    // Act
    await signIn(page, rt, victim.accountId);
    const again = await overview(page, rt);

    // Assert
    expect(again.status).toBe(200);
    expect(again.text).toContain(victim.accountId);
    expect(again.text).not.toContain(attacker.accountId);
    await context.close();
    await attackerContext.close();
  });

  it('a session cookie another runtime set (on another port) is never read by this one, nor disturbs it', async () => {
    // Arrange: one browser signed in to both runtimes; their cookies share the host's jar.
    const here = await rt.newKey();
    const there = await other.newKey();
    const { context, page } = await newPage(browser);
    await signIn(page, other, there.accountId);
    const otherCookies = (await context.cookies()).filter((c) => c.name.startsWith('sf_session'));

    // Act: with only the other runtime's cookie, then signed in here too.
    const before = await overview(page, rt);
    await signIn(page, rt, here.accountId);
    const after = await overview(page, rt);
    const stillThere = await overview(page, other);

    // Assert
    expect(otherCookies).toHaveLength(1);
    expect(before.status).toBe(401);
    expect(before.text).not.toContain(there.accountId);
    expect(after.status).toBe(200);
    expect(after.text).toContain(here.accountId);
    expect(after.text).not.toContain(there.accountId);
    expect(stillThere.text).toContain(there.accountId);
    await context.close();
  });
});
