// Unit tests for the create/update-time webhook URL check (lambdas/adapters/http/url-verifier.ts, DESIGN §4):
// the static refusals, then DNS — a host that resolves to any non-public address is refused, one that does not
// resolve (or whose lookup hangs) is accepted, and the local runtime's policy accepts http and loopback.
// DNS answers for `*.sendflow.test` names are scripted through a mock of node:dns/promises; other names go to
// the real resolver.
import type { LookupAddress } from 'node:dns';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { refusedAddress } from '../../lambdas/adapters/http/guarded-lookup';
import { DnsUrlVerifier } from '../../lambdas/adapters/http/url-verifier';

const dns = vi.hoisted(() => ({
  answers: new Map<string, LookupAddress[] | Error | 'hang'>(),
  calls: [] as string[],
}));

vi.mock('node:dns/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns/promises')>();
  const lookup = async (hostname: string, options?: unknown) => {
    dns.calls.push(hostname);
    const scripted = dns.answers.get(hostname);
    if (scripted === undefined) return (real.lookup as (...args: unknown[]) => Promise<unknown>)(hostname, options);
    if (scripted === 'hang') return new Promise(() => {});
    if (scripted instanceof Error) throw scripted;
    return scripted;
  };
  return { ...real, lookup, default: { ...real, lookup } };
});

const onAws = new DnsUrlVerifier({ allowPrivate: false });
const locally = new DnsUrlVerifier({ allowPrivate: true });

beforeEach(() => {
  dns.answers.clear();
  dns.calls.length = 0;
});

afterEach(() => {
  vi.useRealTimers();
});

const PRIVATE_REASON = 'must not point to a private, loopback or reserved address';

describe('DnsUrlVerifier with allowPrivate false (AWS)', () => {
  it.each([
    ['not a url', 'must be an absolute URL'],
    ['/relative/path', 'must be an absolute URL'],
    ['http://hooks.example.com/sendflow', 'must use https'],
    ['ftp://hooks.example.com/', 'must use https'],
    ['https://user:secret@hooks.example.com/', 'must not contain credentials'],
    ['https://127.0.0.1/hook', PRIVATE_REASON],
    ['https://2130706433/hook', PRIVATE_REASON],
    ['https://0x7f.1/hook', PRIVATE_REASON],
    ['https://[::1]/hook', PRIVATE_REASON],
    ['https://[::ffff:169.254.169.254]/', PRIVATE_REASON],
    ['https://10.1.2.3:8443/', PRIVATE_REASON],
    ['https://localhost/hook', 'must not point to a local host name'],
    ['https://localhost./hook', 'must not point to a local host name'],
    ['https://api.localhost/hook', 'must not point to a local host name'],
    ['https://printer.local/', 'must not point to a local host name'],
    ['https://metadata.google.internal/', 'must not point to a local host name'],
  ])('refuses %s statically (%s), without a DNS lookup', async (url, reason) => {
    // Act
    const problem = await onAws.problem(url);

    // Assert
    expect(problem).toBe(reason);
    expect(dns.calls).toEqual([]);
  });

  it.each([
    ['loopback', [{ address: '127.0.0.1', family: 4 }], '127.0.0.1'],
    ['IPv6 loopback', [{ address: '::1', family: 6 }], '::1'],
    [
      'a private address among public ones',
      [
        { address: '93.184.216.34', family: 4 },
        { address: '192.168.0.10', family: 4 },
      ],
      '192.168.0.10',
    ],
    ['IPv4-mapped loopback', [{ address: '::ffff:127.0.0.1', family: 6 }], '::ffff:127.0.0.1'],
  ] as const)('refuses a host that resolves to %s, naming the address', async (_case, answers, refused) => {
    // Arrange
    dns.answers.set('app.sendflow.test', [...answers]);

    // Act
    const problem = await onAws.problem('https://app.sendflow.test/hook');

    // Assert
    expect(problem).toBe(
      `must not resolve to a private, loopback or reserved address (app.sendflow.test resolves to ${refused})`,
    );
    expect(dns.calls).toEqual(['app.sendflow.test']);
  });

  it("refuses this machine's host name when the real resolver maps it to loopback or a private address", async (ctx) => {
    // Arrange: skipped where the host name does not resolve, or resolves to a public address.
    const { hostname } = await import('node:os');
    const { lookup } = await vi.importActual<typeof import('node:dns/promises')>('node:dns/promises');
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    const refused = refusedAddress(addresses);
    if (refused === null) ctx.skip();

    // Act
    const problem = await onAws.problem(`https://${name}/hook`);

    // Assert
    expect(problem).toBe(
      `must not resolve to a private, loopback or reserved address (${name.toLowerCase()} resolves to ${refused})`,
    );
  });

  it('accepts a host whose every address is public', async () => {
    // Arrange
    dns.answers.set('hooks.sendflow.test', [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);

    // Act / Assert
    expect(await onAws.problem('https://hooks.sendflow.test/sendflow')).toBeNull();
  });

  it('accepts a public IP literal, looking up the bare address of an IPv6 one', async () => {
    // Act
    const v4 = await onAws.problem('https://93.184.216.34/hook');
    const v6 = await onAws.problem('https://[2606:4700::1111]:8443/hook');

    // Assert
    expect(v4).toBeNull();
    expect(v6).toBeNull();
    expect(dns.calls).toEqual(['93.184.216.34', '2606:4700::1111']);
  });

  it('accepts a host that does not resolve (nonexistent.invalid): its attempts fail with a DNS error later', async () => {
    // Act
    const problem = await onAws.problem('https://nonexistent.invalid/hook');

    // Assert
    expect(problem).toBeNull();
    expect(dns.calls).toEqual(['nonexistent.invalid']);
  });

  it('accepts a host whose lookup fails with a resolver error', async () => {
    // Arrange
    dns.answers.set('flaky.sendflow.test', Object.assign(new Error('queryA ESERVFAIL'), { code: 'ESERVFAIL' }));

    // Act / Assert
    expect(await onAws.problem('https://flaky.sendflow.test/')).toBeNull();
  });

  it('gives up on a lookup that hangs after 3 s and accepts the host', async () => {
    // Arrange
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    dns.answers.set('slow.sendflow.test', 'hang');

    // Act
    const pending = onAws.problem('https://slow.sendflow.test/');
    let settled = false;
    void pending.then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(2_999);
    const before = settled;
    await vi.advanceTimersByTimeAsync(1);

    // Assert
    expect(before).toBe(false);
    expect(await pending).toBeNull();
  });
});

describe('DnsUrlVerifier with allowPrivate true (the local runtime)', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost:3000/webhooks',
    'http://[::1]:9000/',
    'https://10.0.0.5/hook',
    'https://hooks.example.com/',
  ])('accepts %s without a DNS lookup', async (url) => {
    // Act
    const problem = await locally.problem(url);

    // Assert
    expect(problem).toBeNull();
    expect(dns.calls).toEqual([]);
  });

  it.each([
    ['ftp://127.0.0.1/', 'must use http or https'],
    ['http://admin:pw@127.0.0.1:8080/', 'must not contain credentials'],
    ['localhost:8080', 'must use http or https'],
    ['nope', 'must be an absolute URL'],
  ])('still refuses %s (%s)', async (url, reason) => {
    expect(await locally.problem(url)).toBe(reason);
  });
});
