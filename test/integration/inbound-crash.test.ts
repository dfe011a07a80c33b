// Nothing the local SMTP server accepted is lost: `npm start` (a child process, as a user runs it) takes 20
// messages, is killed with SIGKILL right after the last 250, and restarts on the same data directory: every one
// of the 20 is then stored exactly once (those spooled and not yet stored are replayed; replays of stored ones
// change nothing), and the spool is empty.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { noUsagePlans } from '../../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../../lambdas/app/accounts';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { createRepositories } from '../../lambdas/runtime/repositories';
import { type Spawned, spawnScript } from '../support/process';
import { RawSmtp } from '../support/smtp-client';

let dir: string;
const children: Spawned[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>) {
  const runtime = spawnScript('bin/local.ts', [], env);
  children.push(runtime);
  const url = (await runtime.waitFor(/listening on (http:\/\/\S+)/, 30_000))[1] as string;
  const smtpPort = Number((await runtime.waitFor(/Inbound SMTP on \S+:(\d+)/))[1]);
  const dynamo = (await runtime.waitFor(/DynamoDB endpoint (http:\/\/\S+)/))[1] as string;
  return { runtime, url, smtpPort, dynamo };
}

/** A live key made as the admin CLI makes it (the runtime seeds a test-mode key only). */
async function liveKey(dynamo: string): Promise<string> {
  const client = localDynamoClient(dynamo);
  const repos = createRepositories(client, loadConfig({}, localTableDefaults()).tables);
  const deps = {
    ...repos,
    usagePlans: noUsagePlans,
    authorizerCache: { flush: async () => {} },
    clock: { now: () => Date.now() },
    random: (size: number) => new Uint8Array(size).map(() => Math.floor(Math.random() * 256)),
  };
  const account = await createAccount(deps, 'scale');
  const { secret } = await createAccountKey(deps, { accountId: account.id, mode: 'live' });
  client.destroy();
  return secret;
}

describe('npm start keeps the mail it accepted', () => {
  it('kill -9 right after the last 250, then a restart: all 20 messages stored, once each', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sendflow-inbound-crash-'));
    const env = {
      PORT: '0',
      SF_DATA_DIR: join(dir, 'data'),
      SF_LOCAL_STATE_FILE: join(dir, 'state.json'),
      SF_DOMAIN_VERIFY_SECONDS: '0',
    };
    const first = await start(env);
    const key = await liveKey(first.dynamo);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const domain = (await (
      await fetch(`${first.url}/domains`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'crash.acme.example', capabilities: { receiving: 'enabled' } }),
      })
    ).json()) as { id: string };
    await fetch(`${first.url}/domains/${domain.id}/verify`, { method: 'POST', headers });

    const { client } = await RawSmtp.open(first.smtpPort);
    const codes: number[] = [];
    const attachment = Buffer.alloc(200_000, 7).toString('base64').replace(/.{76}/g, '$&\r\n');
    for (let i = 0; i < 20; i++) {
      const message = [
        `Subject: crash ${i}`,
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/plain',
        '',
        `message ${i}`,
        '--b',
        'Content-Type: application/octet-stream; name="blob.bin"',
        'Content-Transfer-Encoding: base64',
        '',
        attachment,
        '--b--',
        '',
      ].join('\r\n');
      codes.push((await client.send('a@sender.example', [`c@crash.acme.example`], message)).data.code);
    }
    first.runtime.child.kill('SIGKILL');
    await first.runtime.exited();
    client.close();
    // What the kill left accepted and not stored: at least the last message (stored one at a time, after its 250).
    const spooled = readdirSync(join(dir, 'data', 'inbound-spool')).filter((name) => name.endsWith('.msg'));

    const second = await start(env);
    const listed = async () =>
      (
        (await (
          await fetch(`${second.url}/emails/receiving?limit=100`, { headers: { Authorization: `Bearer ${key}` } })
        ).json()) as { data: { subject: string }[] }
      ).data.map((email) => email.subject);
    await expect.poll(async () => (await listed()).length, { timeout: 30_000, interval: 200 }).toBe(20);

    expect(codes).toEqual(Array(20).fill(250));
    expect(spooled.length).toBeGreaterThanOrEqual(1);
    expect((await listed()).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `crash ${i}`).sort());
    await expect.poll(() => readdirSync(join(dir, 'data', 'inbound-spool')), { timeout: 10_000 }).toEqual([]);
  }, 90_000);
});
