// The local runtime keeps its data private to the user: the data directory 0700, the signing secret 0600,
// whatever the umask and whatever modes an earlier version left; the admin state file 0600.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeLocalState } from '../../bin/local-state';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { startLocalRuntime } from '../../lambdas/runtime/local/runtime';
import { TEST_ENV } from '../support/runtime';

const mode = (path: string) => statSync(path).mode & 0o777;

let dir: string;
let previousUmask: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendflow-private-'));
  previousUmask = process.umask(0o022);
});
afterEach(() => {
  process.umask(previousUmask);
  rmSync(dir, { recursive: true, force: true });
});

async function startOn(dataDir: string) {
  const config = loadConfig({ ...TEST_ENV, SF_DATA_DIR: dataDir }, localTableDefaults());
  const runtime = await startLocalRuntime(config);
  await runtime.stop();
}

describe('local data files', () => {
  it('a new data directory is 0700 and its signing secret 0600', async () => {
    const dataDir = join(dir, 'data');
    await startOn(dataDir);
    expect(mode(dataDir).toString(8)).toBe('700');
    expect(mode(join(dataDir, 'signing-secret')).toString(8)).toBe('600');
  });

  it('an existing data directory and secret left world-readable are made private', async () => {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'signing-secret'), 'a'.repeat(43), { mode: 0o644 });
    await startOn(dataDir);
    expect(mode(dataDir).toString(8)).toBe('700');
    expect(mode(join(dataDir, 'signing-secret')).toString(8)).toBe('600');
  });

  it('the state file with the admin token is 0600 in a 0700 directory, even over an older 0644 file', () => {
    const file = join(dir, '.sendflow', 'local.json');
    const state = { pid: 1, url: 'http://127.0.0.1:1/v1', dynamoEndpoint: 'x', dataDir: 'y', adminToken: 't' };
    writeLocalState(file, state);
    expect(mode(join(dir, '.sendflow')).toString(8)).toBe('700');
    expect(mode(file).toString(8)).toBe('600');
    chmodSync(file, 0o644);
    writeLocalState(file, state);
    expect(mode(file).toString(8)).toBe('600');
  });
});
