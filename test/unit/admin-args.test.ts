// The admin CLI's argument rules: what it accepts, and the message for everything it refuses (exit 2).
import { describe, expect, it } from 'vitest';
import { parseAdminArgs, UsageError } from '../../bin/admin-args';

describe('parseAdminArgs', () => {
  it('parses each command with its defaults', () => {
    expect(parseAdminArgs(['create-account', '--plan', 'growth'])).toEqual({
      command: { name: 'create-account', plan: 'growth' },
      target: { kind: 'local', stack: 'Sendflow-prod-Api' },
    });
    expect(parseAdminArgs(['create-key', '--account', 'acct_1']).command).toEqual({
      name: 'create-key',
      accountId: 'acct_1',
      mode: 'live',
    });
    expect(
      parseAdminArgs(['create-key', '--account', 'a', '--mode', 'test', '--scopes', 'email:send, webhook:read'])
        .command,
    ).toEqual({
      name: 'create-key',
      accountId: 'a',
      mode: 'test',
      scopes: ['email:send', 'webhook:read'],
    });
    expect(parseAdminArgs(['dashboard-link', '--account', 'a']).command).toEqual({
      name: 'dashboard-link',
      accountId: 'a',
      mode: 'live',
    });
    expect(parseAdminArgs(['dashboard-link', '--account', 'a', '--mode', 'test', '--aws']).target.kind).toBe('aws');
    expect(() => parseAdminArgs(['dashboard-link'])).toThrow(/--account is required/);
    expect(() => parseAdminArgs(['dashboard-link', '--account', 'a', '--plan', 'free'])).toThrow(UsageError);
    expect(parseAdminArgs(['set-plan', '--account', 'a', '--plan', 'scale']).command).toEqual({
      name: 'set-plan',
      accountId: 'a',
      plan: 'scale',
    });
    expect(parseAdminArgs(['revoke-key', '--account', 'a', '--key', 'key_1']).command).toEqual({
      name: 'revoke-key',
      accountId: 'a',
      keyId: 'key_1',
    });
    expect(parseAdminArgs(['create-account', '--plan', 'free', '--aws', '--stack', 'Prod']).target).toEqual({
      kind: 'aws',
      stack: 'Prod',
    });
  });

  it('targets the api stack of --stage, the default stage (prod) without it', () => {
    expect(parseAdminArgs(['create-account', '--plan', 'free', '--aws']).target).toEqual({
      kind: 'aws',
      stack: 'Sendflow-prod-Api',
    });
    expect(parseAdminArgs(['create-account', '--plan', 'free', '--aws', '--stage', 'staging']).target).toEqual({
      kind: 'aws',
      stack: 'Sendflow-staging-Api',
    });
  });

  it('parses the reputation commands: show, and lift all, one domain or only the account-wide pause', () => {
    expect(parseAdminArgs(['reputation', '--account', 'a']).command).toEqual({
      name: 'reputation',
      accountId: 'a',
      mode: 'live',
    });
    expect(parseAdminArgs(['reputation-lift', '--account', 'a', '--mode', 'test']).command).toEqual({
      name: 'reputation-lift',
      accountId: 'a',
      mode: 'test',
      note: 'lifted with the admin CLI',
    });
    expect(
      parseAdminArgs(['reputation-lift', '--account', 'a', '--domain', 'News.Example.com', '--note', ' ticket 42 '])
        .command,
    ).toEqual({ name: 'reputation-lift', accountId: 'a', mode: 'live', domain: 'news.example.com', note: 'ticket 42' });
    expect(parseAdminArgs(['reputation-lift', '--account', 'a', '--account-only']).command).toMatchObject({
      domain: null,
    });
    expect(() =>
      parseAdminArgs(['reputation-lift', '--account', 'a', '--domain', 'x.example', '--account-only']),
    ).toThrow(/--domain and --account-only exclude each other/);
    expect(() => parseAdminArgs(['reputation', '--account', 'a', '--domain', 'x.example'])).toThrow(
      /reputation does not take --domain/,
    );
    expect(() => parseAdminArgs(['reputation-lift'])).toThrow(/--account is required/);
  });

  it('parses the list commands', () => {
    expect(parseAdminArgs(['list-accounts', '--aws']).command).toEqual({ name: 'list-accounts' });
    expect(parseAdminArgs(['dashboard-revoke', '--account', 'acct_1']).command).toEqual({
      name: 'dashboard-revoke',
      accountId: 'acct_1',
    });
    expect(parseAdminArgs(['upgrade-emails', '--aws', '--stage', 'staging'])).toEqual({
      command: { name: 'upgrade-emails' },
      target: { kind: 'aws', stack: 'Sendflow-staging-Api' },
    });
    expect(parseAdminArgs(['list-keys', '--account', 'acct_1']).command).toEqual({
      name: 'list-keys',
      accountId: 'acct_1',
    });
    expect(parseAdminArgs(['list-inbound-failures']).command).toEqual({ name: 'list-inbound-failures' });
    expect(parseAdminArgs(['retry-inbound-failure', '--id', 'in_1']).command).toEqual({
      name: 'retry-inbound-failure',
      id: 'in_1',
    });
  });

  it.each(['--help', '-h', 'help', 'create-key --help', 'revoke-key -h', 'list-keys --help --aws'])(
    'asks for the usage with `%s` (even where required options are missing)',
    (line) => {
      const args = line.split(' ');
      expect(parseAdminArgs(args).command).toEqual({ name: 'help' });
    },
  );

  it.each([
    [['create-account'], /--plan is required/],
    [['create-account', '--plan', 'platinum'], /--plan must be one of/],
    [['create-key'], /--account is required/],
    [['create-key', '--account', '  '], /--account is required/],
    [['create-key', '--account', 'a', '--scopes', 'email:send,nope'], /unknown scope: nope/],
    [['create-key', '--account', 'a', '--scopes', ','], /at least one scope/],
    [['create-key', '--account', 'a', '--mode', 'prod'], /--mode must be live or test/],
    [['create-account', '--plan', 'free', '--account', 'a'], /create-account does not take --account/],
    [['revoke-key', '--account', 'a'], /--key is required/],
    [['frobnicate'], /unknown command/],
    [['constructor'], /unknown command: constructor/],
    [['list-keys'], /--account is required/],
    [['list-accounts', '--account', 'a'], /list-accounts does not take --account/],
    [['retry-inbound-failure'], /--id is required/],
    [['list-inbound-failures', '--id', 'in_1'], /list-inbound-failures does not take --id/],
    [['create-account', 'extra', '--plan', 'free'], /unexpected argument/],
    [['create-account', '--plan', 'free', '--bogus'], /Unknown option/],
    [[], /missing command/],
    [['create-account', '--plan', 'free', '--aws', '--stage', 'Staging'], /--stage: Invalid Sendflow stage "Staging"/],
    [['create-account', '--plan', 'free', '--aws', '--stage', '1st'], /starting with a letter/],
    [['create-account', '--plan', 'free', '--aws', '--stage', 'a'.repeat(21)], /1 to 20 lowercase/],
    [['create-account', '--plan', 'free', '--aws', '--stage', 'staging', '--stack', 'X'], /exclude each other/],
  ])('refuses %j', (args, message) => {
    expect(() => parseAdminArgs(args)).toThrow(UsageError);
    expect(() => parseAdminArgs(args)).toThrow(message);
  });
});
