// The SMTP session table (lambdas/domain/smtp-sessions.ts): caps per client (IPv4 address, IPv6 /64) and per
// recipient domain beside the global one; a full table admits a newcomer in place of the connection that has
// waited longest without beginning a message, of the client holding the most; never one whose DATA streams.
import { describe, expect, it } from 'vitest';
import { clientOf, type SessionCaps, SmtpSessionTable } from '../../lambdas/domain/smtp-sessions';

const CAPS: SessionCaps = { maxConnections: 4, perClient: 2, perDomain: 2, evictIdleAfterMs: 1_000 };
const T0 = 1_000_000;

describe('clientOf', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['not an address', 'not an address'],
  ])('%s counts as %s', (address, client) => {
    expect(clientOf(address)).toBe(client);
  });
});

describe('SmtpSessionTable', () => {
  it('admits at most perClient connections of one client; another client is admitted', () => {
    const table = new SmtpSessionTable(CAPS);

    const answers = ['a', 'b', 'c'].map((id) => table.admit(id, '192.0.2.1', T0));
    const sameNet = table.admit('v6a', '2001:db8::1', T0);
    const sameNet2 = table.admit('v6b', '2001:db8::2', T0);
    const sameNet3 = table.admit('v6c', '2001:db8::3', T0);

    expect(answers).toEqual([{ admitted: true }, { admitted: true }, { admitted: false, reason: 'client' }]);
    expect([sameNet.admitted, sameNet2.admitted]).toEqual([true, true]);
    expect(sameNet3).toEqual({ admitted: false, reason: 'client' });
    expect(table.held().client('192.0.2.1')).toBe(2);
  });

  it('gives a place back when a connection leaves', () => {
    const table = new SmtpSessionTable(CAPS);
    table.admit('a', '192.0.2.1', T0);
    table.admit('b', '192.0.2.1', T0);

    expect(table.leave('a')).toBe(true);
    expect(table.leave('a')).toBe(false);
    expect(table.admit('c', '192.0.2.1', T0).admitted).toBe(true);
  });

  it('holds at most perDomain sessions at a domain; a session holds its domain once; a message end frees it', () => {
    const table = new SmtpSessionTable(CAPS);
    for (const [id, address] of [
      ['a', '192.0.2.1'],
      ['b', '192.0.2.2'],
      ['c', '192.0.2.3'],
    ]) {
      table.admit(id as string, address as string, T0);
    }

    const held = [
      table.holdDomain('a', 'x.example'),
      table.holdDomain('a', 'x.example'),
      table.holdDomain('b', 'x.example'),
    ];
    const full = table.holdDomain('c', 'x.example');
    const other = table.holdDomain('c', 'y.example');
    table.endMessage('a', T0);
    const afterEnd = table.holdDomain('c', 'x.example');
    table.newTransaction('b');
    table.leave('c');

    expect(held).toEqual([true, true, true]);
    expect(full).toBe(false);
    expect(other).toBe(true);
    expect(afterEnd).toBe(true);
    expect(table.held().domain('x.example')).toBe(0);
    expect(table.held().domain('y.example')).toBe(0);
    expect(table.holdDomain('gone', 'x.example')).toBe(false);
  });

  it('full: a newcomer takes the place of the longest waiting connection of the client holding the most', () => {
    // Arrange: client 1 holds two (waiting since T0 and T0+100), clients 2 and 3 one each (since T0, T0-50).
    const table = new SmtpSessionTable(CAPS);
    table.admit('1a', '192.0.2.1', T0 + 100);
    table.admit('1b', '192.0.2.1', T0);
    table.admit('2a', '192.0.2.2', T0);
    table.admit('3a', '192.0.2.3', T0 - 50);

    // Act
    const tooSoon = table.admit('new0', '192.0.2.9', T0 + 500);
    const newcomer = table.admit('new', '192.0.2.9', T0 + 2_000);

    // Assert: not before evictIdleAfterMs; then client 1's oldest, though client 3's waited longer.
    expect(tooSoon).toEqual({ admitted: false, reason: 'full' });
    expect(newcomer).toEqual({ admitted: true, evicted: '1b' });
    expect(table.has('1b')).toBe(false);
    expect(table.held().connections).toBe(4);
    expect(table.held().client('192.0.2.1')).toBe(1);
  });

  it('never gives up a connection whose message streams; its wait restarts when the message ends', () => {
    const table = new SmtpSessionTable(CAPS);
    for (const [id, address] of [
      ['a', '192.0.2.1'],
      ['b', '192.0.2.2'],
      ['c', '192.0.2.3'],
      ['d', '192.0.2.4'],
    ]) {
      table.admit(id as string, address as string, T0);
      table.beginMessage(id as string);
    }

    const whileSending = table.admit('new', '192.0.2.9', T0 + 10_000);
    table.endMessage('c', T0 + 10_000);
    const justEnded = table.admit('new', '192.0.2.9', T0 + 10_500);
    const later = table.admit('new', '192.0.2.9', T0 + 11_000);

    expect(whileSending).toEqual({ admitted: false, reason: 'full' });
    expect(justEnded).toEqual({ admitted: false, reason: 'full' });
    expect(later).toEqual({ admitted: true, evicted: 'c' });
  });
});
