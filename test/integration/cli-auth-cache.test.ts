// The admin CLI, a separate process, reaches a running runtime's authorizer cache: with a 300 s TTL, a
// revoked key stops working and a plan change applies at once, as on AWS (FlushStageAuthorizersCache).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, type Spawned, spawnScript } from '../support/process';

let dir: string;
let env: Record<string, string>;
let runtime: Spawned;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sendflow-cli-cache-'));
  env = {
    PORT: '0',
    SF_DATA_DIR: join(dir, 'data'),
    SF_LOCAL_STATE_FILE: join(dir, 'state.json'),
    SF_AUTH_CACHE_TTL: '300',
    SF_SEED: 'false',
  };
  runtime = spawnScript('bin/local.ts', [], env);
  url = (await runtime.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
}, 30_000);

afterAll(async () => {
  if (runtime.child.exitCode === null) {
    runtime.child.kill('SIGTERM');
    await runtime.exited();
  }
  rmSync(dir, { recursive: true, force: true });
});

const admin = (...args: string[]) => {
  const result = runScript('bin/admin.ts', args, env);
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, string>;
};

describe('admin CLI with the authorizer cache on (SF_AUTH_CACHE_TTL=300)', () => {
  it('set-plan and revoke-key apply at once to a running runtime', async () => {
    const account = admin('create-account', '--plan', 'free');
    const key = admin('create-key', '--account', account.account_id as string, '--mode', 'test');
    const call = () => fetch(`${url}/api-keys`, { headers: { Authorization: `Bearer ${key.key}` } });
    expect((await call()).headers.get('x-ratelimit-limit')).toBe('10'); // now cached for 300 s

    admin('set-plan', '--account', account.account_id as string, '--plan', 'scale');
    expect((await call()).headers.get('x-ratelimit-limit')).toBe('500');

    admin('revoke-key', '--account', account.account_id as string, '--key', key.id as string);
    expect((await call()).status).toBe(401);
  });

  it('the flush endpoint answers only with the token from the 0600 state file', async () => {
    const state = JSON.parse(readFileSync(env.SF_LOCAL_STATE_FILE as string, 'utf8')) as Record<string, string>;
    const flush = `${new URL(url).origin}/_sendflow/authorizer-cache/flush`;
    for (const token of [undefined, 'wrong', `${state.adminToken}x`]) {
      const res = await fetch(flush, { method: 'POST', headers: token ? { 'X-Sendflow-Admin-Token': token } : {} });
      expect(res.status, String(token)).toBe(404);
    }
    const ok = await fetch(flush, {
      method: 'POST',
      headers: { 'X-Sendflow-Admin-Token': state.adminToken as string },
    });
    expect(ok.status).toBe(204);
  });
});
