// The admin CLI on the local runtime's inbound dead letters, run as an operator runs it (no runtime running, the
// data directory on disk): list-inbound-failures shows each message that failed every try with its envelope,
// tries, last error and file; retry-inbound-failure puts one back in the spool (and says so), an unknown id is
// exit 1; a stopped runtime's next start would find it there.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskSpool } from '../../lambdas/adapters/local/inbound-spool';
import { runScript } from '../support/process';

const dir = mkdtempSync(join(tmpdir(), 'sf-cli-inbound-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { SF_DATA_DIR: dir, SF_LOCAL_STATE_FILE: join(dir, 'none.json') };
const admin = (...args: string[]) => runScript('bin/admin.ts', args, env);

describe('admin CLI: inbound failures', () => {
  it('lists the dead letters, retries one back into the spool, and refuses an unknown id', () => {
    // Arrange: one message moved aside as the runtime moves it (DiskSpool.deadLetter).
    const spool = new DiskSpool(join(dir, 'inbound-spool'), join(dir, 'inbound-dead'));
    const writer = spool.begin({
      mailFrom: 'a@x.example',
      recipients: ['b@rx.example'],
      receivedAt: '2026-11-26T07:00:00.000Z',
    });
    writer.write(Buffer.from('Subject: stuck\r\n\r\nhello\r\n'));
    const id = writer.commit();
    spool.deadLetter({
      id,
      mailFrom: 'a@x.example',
      recipients: ['b@rx.example'],
      receivedAt: '2026-11-26T07:00:00.000Z',
      bytes: 25,
      attempts: 6,
      reason: 'ValidationException: Item size has exceeded the maximum allowed size',
      deadAt: '2026-11-26T07:02:35.000Z',
    });

    // Act
    const listed = admin('list-inbound-failures');
    const retried = admin('retry-inbound-failure', '--id', id);
    const unknown = admin('retry-inbound-failure', '--id', id);
    const after = admin('list-inbound-failures');

    // Assert
    expect(listed.status, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({
      data: [
        {
          id,
          received_at: '2026-11-26T07:00:00.000Z',
          mail_from: 'a@x.example',
          recipients: ['b@rx.example'],
          bytes: 25,
          attempts: 6,
          reason: 'ValidationException: Item size has exceeded the maximum allowed size',
          dead_at: '2026-11-26T07:02:35.000Z',
          file: join(dir, 'inbound-dead', `${id}.msg`),
        },
      ],
    });
    expect(retried.status, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout)).toEqual({ id, retried: true });
    expect(existsSync(join(dir, 'inbound-spool', `${id}.msg`))).toBe(true);
    expect(new DiskSpool(join(dir, 'inbound-spool')).pending()).toEqual([id]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/No inbound failure in_/);
    expect(JSON.parse(after.stdout)).toEqual({ data: [] });
  }, 60_000);
});
