// The account's notices (app/notices): a reputation warning is mailed to the account's address at most once per
// kind and UTC day; an account without an address gets nothing; the local notifier writes notices.jsonl; the SES
// notifier sends exactly one plain-text SendEmail from the stage's sender.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { FileNotifier } from '../../lambdas/adapters/local/file-notifier';
import { SesNotifier } from '../../lambdas/adapters/ses/ses-notifier';
import {
  type Notice,
  type NoticeDeps,
  reputationNotice,
  sendNotice,
  webhookDisabledNotice,
} from '../../lambdas/app/notices/notify';
import { FakeClock, InMemoryAccountRepository, InMemoryRateLimitCounter } from '../support/fakes';

const figures = { sent: 1000, bounced: 60, complained: 0, bounceRate: 0.06, complaintRate: 0, breaches: [] };
const tenant = { accountId: 'acct_a', mode: 'live' as const };

describe('sendNotice', () => {
  let sent: Notice[];
  let clock: FakeClock;
  let deps: NoticeDeps;
  let accounts: InMemoryAccountRepository;

  beforeEach(async () => {
    sent = [];
    clock = new FakeClock(Date.UTC(2026, 11, 7, 9, 0, 0));
    accounts = new InMemoryAccountRepository();
    await accounts.create({ id: 'acct_a', plan: 'starter', createdAt: '2026-01-01T00:00:00.000Z' });
    await accounts.create({ id: 'acct_b', plan: 'starter', createdAt: '2026-01-01T00:00:00.000Z' });
    await accounts.setNoticeEmail('acct_a', 'ops@example.com');
    deps = {
      accounts,
      counter: new InMemoryRateLimitCounter(),
      notifier: { send: async (notice) => void sent.push(notice) },
      clock,
    };
  });

  it('mails a warning once a day: a second warning that day sends nothing, the next day sends again', async () => {
    const notice = reputationNotice(tenant, { kind: 'account' }, 'warning', figures);

    const first = await sendNotice(deps, 'acct_a', notice.kind, notice);
    clock.advance(6 * 3_600_000);
    const again = await sendNotice(deps, 'acct_a', notice.kind, notice);
    const paused = reputationNotice(tenant, { kind: 'account' }, 'paused', figures);
    const pause = await sendNotice(deps, 'acct_a', paused.kind, paused);
    clock.advance(12 * 3_600_000);
    const nextDay = await sendNotice(deps, 'acct_a', notice.kind, notice);

    expect([first, again, pause, nextDay]).toEqual(['sent', 'already-sent-today', 'sent', 'sent']);
    expect(sent.map((n) => [n.to, n.kind, n.subject])).toEqual([
      ['ops@example.com', 'reputation_warning', 'Sendflow: sending reputation warning'],
      ['ops@example.com', 'reputation_paused', 'Sendflow: live sending paused'],
      ['ops@example.com', 'reputation_warning', 'Sendflow: sending reputation warning'],
    ]);
    expect(sent[0]?.text).toContain('bounce rate 6%, complaint rate 0% (1000 sent)');
    expect(sent[0]?.text).toContain('Account acct_a (live mode)');
  });

  it('sends nothing to an account without an address, nor once it is removed', async () => {
    const notice = webhookDisabledNotice(
      { id: 'wh_1', accountId: 'acct_b', mode: 'live' },
      'https://example.com/…',
      'gone',
    );

    const none = await sendNotice(deps, 'acct_b', notice.kind, notice);
    await accounts.setNoticeEmail('acct_a', null);
    const removed = await sendNotice(deps, 'acct_a', notice.kind, notice);

    expect([none, removed]).toEqual(['no-address', 'no-address']);
    expect(sent).toEqual([]);
  });
});

describe('FileNotifier', () => {
  it('appends one JSON line per notice to notices.jsonl and prints one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-notices-'));
    const printed: string[] = [];
    const notifier = new FileNotifier(
      dir,
      (line) => printed.push(line),
      () => Date.UTC(2026, 11, 7),
    );
    const notice: Notice = {
      accountId: 'acct_a',
      kind: 'webhook_disabled',
      to: 'ops@example.com',
      subject: 'S',
      text: 'T',
    };

    await notifier.send(notice);
    await notifier.send(notice);

    const lines = readFileSync(join(dir, 'notices.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      { at: '2026-12-07T00:00:00.000Z', ...notice },
      { at: '2026-12-07T00:00:00.000Z', ...notice },
    ]);
    expect(printed).toEqual([
      'Notice to ops@example.com (acct_a): S [notices.jsonl]',
      'Notice to ops@example.com (acct_a): S [notices.jsonl]',
    ]);
  });
});

describe('SesNotifier', () => {
  const ses = mockClient(SESv2Client);
  beforeEach(() => ses.reset());

  it('sends one plain-text SendEmail from the stage sender to the address', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: 'm-1' });
    const notifier = new SesNotifier(new SESv2Client({ region: 'eu-west-1' }), 'notices@sendflow.example');

    await notifier.send({
      accountId: 'acct_a',
      kind: 'reputation_warning',
      to: 'ops@example.com',
      subject: 'Sendflow: sending reputation warning',
      text: 'Body\n',
    });

    const calls = ses.commandCalls(SendEmailCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({
      FromEmailAddress: 'notices@sendflow.example',
      Destination: { ToAddresses: ['ops@example.com'] },
      Content: {
        Simple: {
          Subject: { Data: 'Sendflow: sending reputation warning', Charset: 'UTF-8' },
          Body: { Text: { Data: 'Body\n', Charset: 'UTF-8' } },
        },
      },
    });
  });
});
