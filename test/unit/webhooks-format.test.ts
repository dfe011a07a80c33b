// Unit tests for format detection (lambdas/domain/webhooks/format.ts, spec §2.1, DESIGN §4): Discord's and
// Slack's incoming-webhook addresses by exact host (and, for Discord, the webhooks path); all else standard.
import { describe, expect, it } from 'vitest';
import { detectFormat, FORMATS } from '../../lambdas/domain/webhooks/format';

const TOKEN = '123456789012345678/AbC-dEf_gHi';

describe('detectFormat', () => {
  it('knows the three formats', () => {
    expect([...FORMATS]).toEqual(['standard', 'discord', 'slack']);
  });

  it.each(
    [
      'discord.com',
      'discordapp.com',
      'ptb.discord.com',
      'canary.discord.com',
      'ptb.discordapp.com',
      'canary.discordapp.com',
    ]
      .flatMap((host) => [`https://${host}/api/webhooks/${TOKEN}`, `https://${host}/api/v10/webhooks/${TOKEN}`])
      .concat([`https://DISCORD.com/api/webhooks/${TOKEN}?wait=true`, `https://discord.com/api/v9/webhooks/${TOKEN}`]),
  )('detects Discord for %s', (url) => {
    expect(detectFormat(url)).toBe('discord');
  });

  it.each([
    'https://discord.com/',
    'https://discord.com/channels/123/456',
    'https://discord.com/api/users/@me',
    'https://discord.com/api/webhooks',
    'https://discord.com/webhooks/123/abc',
    'https://discord.com/x/api/webhooks/123/abc',
    'https://discord.com/api/vx/webhooks/123/abc',
  ])('keeps Discord hosts with another path standard: %s', (url) => {
    expect(detectFormat(url)).toBe('standard');
  });

  it.each([
    'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
    'https://hooks.slack.com/workflows/T000/A000/123/abc',
    'https://HOOKS.SLACK.COM/services/T1/B1/x',
  ])('detects Slack for %s', (url) => {
    expect(detectFormat(url)).toBe('slack');
  });

  it.each([
    `https://hooks.slack.com.evil.com/services/T1/B1/x`,
    `https://evil-hooks.slack.com.example/services/T1/B1/x`,
    `https://slack.com/services/T1/B1/x`,
    `https://api.slack.com/services/T1/B1/x`,
    `https://evil.com/hooks.slack.com/services/T1/B1/x`,
    `https://hooks.slack.com@evil.com/services/T1/B1/x`,
    `https://evil-discord.com/api/webhooks/${TOKEN}`,
    `https://discord.com.evil.com/api/webhooks/${TOKEN}`,
    `https://notdiscord.com/api/webhooks/${TOKEN}`,
    `https://evil.discord.com/api/webhooks/${TOKEN}`,
    `https://discord.gg/api/webhooks/${TOKEN}`,
    `https://evil.com/api/webhooks/${TOKEN}?host=discord.com`,
    `https://discord.com@evil.com/api/webhooks/${TOKEN}`,
  ])('keeps the lookalike %s standard', (url) => {
    expect(detectFormat(url)).toBe('standard');
  });

  it.each([
    '',
    'garbage',
    'discord.com/api/webhooks/1/x',
    'hooks.slack.com/services/x',
    '://',
    'https://',
    'https://example.com/hook',
  ])('falls back to standard for %j', (url) => {
    expect(detectFormat(url)).toBe('standard');
  });
});
