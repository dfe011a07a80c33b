// The runtime side of `npm run bench:attackers`: the local runtime alone in its own process (as `npm start`,
// data on disk), with two scale-plan tenants A (attacker) and B (victim), each with a test key (A also a live one,
// for its receiving domain); prints one JSON line {url, smtpPort, a, b, aLive} and runs until stdin closes. BENCH_ROOT: the checkout whose code runs (default: this
// one), so the same bench measures an older release's code: docs/benchmarks.md, "Attackers (`bench:attackers`)".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(process.env.BENCH_ROOT ?? join(import.meta.dirname, '..'));
const load = <T>(path: string): Promise<T> => import(pathToFileURL(join(root, path)).href) as Promise<T>;

type RuntimeModule = typeof import('../lambdas/runtime/local/runtime');
type ConfigModule = typeof import('../lambdas/runtime/config');
type AccountsModule = typeof import('../lambdas/app/accounts');
type PlansModule = typeof import('../lambdas/adapters/local/usage-plans');

const { startLocalRuntime } = await load<RuntimeModule>('lambdas/runtime/local/runtime.ts');
const { loadConfig, localTableDefaults } = await load<ConfigModule>('lambdas/runtime/config.ts');
const { createAccount, createAccountKey } = await load<AccountsModule>('lambdas/app/accounts.ts');
const { noUsagePlans } = await load<PlansModule>('lambdas/adapters/local/usage-plans.ts');

const dataDir = mkdtempSync(join(tmpdir(), 'sendflow-attackers-'));
const config = loadConfig(
  {
    PORT: '0',
    SF_SMTP_PORT: '0',
    SF_SEED: 'false',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    SF_DATA_DIR: dataDir,
    SF_SIMULATOR_STEP_SECONDS: '0',
    SF_IP_RATE_LIMIT: '100000',
    // A's receiving domain (the hostile-inbound scenario) is verified at once.
    SF_DOMAIN_VERIFY_SECONDS: '0',
    // A's `path` attachments come from the bench's loopback file server.
    SF_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true',
  },
  localTableDefaults(),
);
const runtime = await startLocalRuntime(config);
const deps = { ...runtime.services, usagePlans: noUsagePlans };
const plan = (process.env.BENCH_PLAN ?? 'scale') as 'scale';
const accountA = await createAccount(deps, plan);
const accountB = await createAccount(deps, plan);
const keyOf = async (accountId: string, mode: 'test' | 'live') =>
  (await createAccountKey(deps, { accountId, mode })).secret;
const a = await keyOf(accountA.id, 'test');
const b = await keyOf(accountB.id, 'test');
// Receiving is live mode's: A's live key makes its receiving domain.
const aLive = await keyOf(accountA.id, 'live');
console.log(JSON.stringify({ url: runtime.url, smtpPort: runtime.smtpPort, a, b, aLive, root }));

const stop = async () => {
  await runtime.stop();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.stdin.on('end', () => void stop());
process.stdin.on('close', () => void stop());
process.stdin.resume();
process.on('SIGTERM', () => void stop());
