// `npm run screenshot:dashboard`: the pictures of the dashboard in docs/dashboard.md, every page of the tour
// (bin/dashboard-tour.ts) at a laptop's width and a phone's, as docs/dashboard/<page>-<width>.png. Made the way a
// person sees them: a local runtime in memory, an account seeded through the API with a webhook to a small local
// endpoint that fails every third request, Chromium signed in. Each picture is the first screen of its page (not
// the whole scroll), so the files stay small.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { noUsagePlans } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import { createSignInLink } from '../lambdas/app/dashboard/sign-in';
import { loadConfig, localTableDefaults } from '../lambdas/runtime/config';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { launchChromium } from './chromium';
import { seedTour, TOUR_WIDTHS, tourPages } from './dashboard-tour';

const OUT = join(import.meta.dirname, '..', 'docs', 'dashboard');
/** The first screen of a page: 800 px tall on a laptop, 740 on a phone. */
const HEIGHTS: Readonly<Record<number, number>> = { 1280: 800, 375: 740 };

async function main(): Promise<void> {
  let requests = 0;
  const endpoint = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(++requests % 3 === 0 ? 503 : 200).end('ok'));
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  const config = loadConfig(
    {
      PORT: '0',
      SF_SMTP_PORT: '0',
      SF_DATA_DIR: ':memory:',
      SF_SEED: 'false',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      SF_SIMULATOR_STEP_SECONDS: '0',
      SF_DOMAIN_VERIFY_SECONDS: '0',
    },
    localTableDefaults(),
  );
  const runtime = await startLocalRuntime(config);
  const browser = await launchChromium();
  try {
    const deps = { ...runtime.services, usagePlans: noUsagePlans, random: randomBytes };
    const account = await createAccount(deps, 'starter');
    const { key, secret } = await createAccountKey(deps, { accountId: account.id, mode: 'test' });
    const ids = await seedTour(runtime.url, secret, endpointUrl, key.id);
    // Let the simulated events and their deliveries happen before the pictures.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const { url } = await createSignInLink(runtime.services, {
      accountId: account.id,
      mode: 'test',
      baseUrl: runtime.url,
    });
    const page = await browser.newPage({ viewport: { width: TOUR_WIDTHS[0], height: 800 }, deviceScaleFactor: 1 });
    await page.goto(url);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    mkdirSync(OUT, { recursive: true });
    // `npm run screenshot:dashboard -- overview,emails`: only those pages (the ones a change touched).
    const only = process.argv[2]?.split(',').filter(Boolean);
    const targets = tourPages(ids).filter((target) => !only?.length || only.includes(target.name));
    for (const target of targets) {
      for (const width of TOUR_WIDTHS) {
        await page.setViewportSize({ width, height: HEIGHTS[width] ?? 800 });
        await page.goto(`${runtime.url}/dashboard${target.path ? `/${target.path}` : ''}`);
        await page.screenshot({ path: join(OUT, `${target.name}-${width}.png`), fullPage: false });
      }
    }
    console.log(`wrote ${targets.length * TOUR_WIDTHS.length} pictures to ${OUT}`);
  } finally {
    await browser.close();
    await runtime.stop();
    endpoint.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
