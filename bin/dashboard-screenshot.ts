// `npm run screenshot:dashboard`: the picture of the webhook page in docs/dashboard.md (docs/dashboard-webhook.png),
// made the way a person sees it: a local runtime in memory, an account with a webhook to a small local endpoint that
// fails every third request, a few test events, then Chromium signed in on that webhook's page.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { noUsagePlans } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import { createSignInLink } from '../lambdas/app/dashboard/sign-in';
import { loadConfig, localTableDefaults } from '../lambdas/runtime/config';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { launchChromium } from './chromium';

const OUT = join(import.meta.dirname, '..', 'docs', 'dashboard-webhook.png');

async function main(): Promise<void> {
  let requests = 0;
  const endpoint = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(++requests % 3 === 0 ? 503 : 200).end('ok'));
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/webhooks/sendflow`;
  const config = loadConfig(
    { PORT: '0', SF_DATA_DIR: ':memory:', SF_SEED: 'false', POWERTOOLS_LOG_LEVEL: 'ERROR' },
    localTableDefaults(),
  );
  const runtime = await startLocalRuntime(config);
  const browser = await launchChromium();
  try {
    const deps = { ...runtime.services, usagePlans: noUsagePlans, random: randomBytes };
    const account = await createAccount(deps, 'starter');
    const { secret } = await createAccountKey(deps, { accountId: account.id, mode: 'test' });
    const call = (path: string, body?: unknown) =>
      fetch(`${runtime.url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then((res) => res.json() as Promise<{ id: string }>);
    const hook = await call('/webhooks', {
      url: endpointUrl,
      events: ['email.delivered', 'email.bounced', 'email.complained'],
      description: 'Order service',
      rate_limit_per_second: 20,
      ordering: 'per_email',
    });
    for (let i = 0; i < 8; i++) await call(`/webhooks/${hook.id}/test`);

    const { url } = await createSignInLink(runtime.services, {
      accountId: account.id,
      mode: 'test',
      baseUrl: runtime.url,
    });
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 }, deviceScaleFactor: 1 });
    await page.goto(url);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // exact: the overview's rows link their endpoints, whose URL says "webhooks" too.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('link', { name: endpointUrl }).click();
    await page.screenshot({ path: OUT, fullPage: false });
    console.log(`wrote ${OUT}`);
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
