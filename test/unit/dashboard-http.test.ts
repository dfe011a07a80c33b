// The dashboard's HTTP plumbing (lambdas/handlers/dashboard/http.ts): every interpolated value is escaped, the
// same-origin rule for form posts, cookies, and the sealed flash message that carries a secret shown once.
import { describe, expect, it } from 'vitest';
import {
  cookie,
  cookies,
  FLASH_COOKIE,
  flashIsFor,
  flashTarget,
  html,
  openFlash,
  Safe,
  sameOrigin,
  sealFlash,
  sessionCookieName,
  sessionCookies,
  withCookies,
} from '../../lambdas/handlers/dashboard/http';

describe('html', () => {
  it('escapes every interpolated value, in text and in attributes, unless it is Safe markup', () => {
    const hostile = `"><script>alert('x')</script>&`;

    const out = html`<a title="${hostile}">${hostile}</a>${new Safe('<b>ok</b>')}${[hostile, 1]}${null}${false}`.markup;

    expect(out).toBe(
      '<a title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">' +
        '&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</a><b>ok</b>' +
        '&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;1',
    );
  });
});

describe('sameOrigin', () => {
  const host = { Host: 'api.example.com' };

  it('follows Sec-Fetch-Site when the browser sends it', () => {
    expect(sameOrigin({ ...host, 'Sec-Fetch-Site': 'same-origin', Origin: 'null' })).toBe(true);
    expect(sameOrigin({ ...host, 'sec-fetch-site': 'cross-site', Origin: 'https://api.example.com' })).toBe(false);
    expect(sameOrigin({ ...host, 'Sec-Fetch-Site': 'same-site' })).toBe(false);
  });

  it('else needs an Origin naming our host; a null origin is refused; no Origin at all passes', () => {
    expect(sameOrigin({ ...host, Origin: 'https://api.example.com' })).toBe(true);
    expect(sameOrigin({ ...host, Origin: 'https://evil.example' })).toBe(false);
    expect(sameOrigin({ ...host, Origin: 'null' })).toBe(false);
    expect(sameOrigin({ ...host, Origin: 'not a url' })).toBe(false);
    expect(sameOrigin(host)).toBe(true);
  });
});

describe('cookies', () => {
  it('reads the Cookie header (any casing); a cookie sent twice is trusted in neither copy', () => {
    expect(cookies({ Cookie: 'a=1; sf_session=abc' })).toEqual({ a: '1', sf_session: 'abc' });
    expect(cookies({ cookie: 'a=1; sf_session=abc; a=2; a=3' })).toEqual({ sf_session: 'abc' });
    expect(cookies({})).toEqual({});
  });

  it('writes HttpOnly, SameSite=Strict cookies scoped to the dashboard, Secure over https', () => {
    expect(cookie('sf_session', 'v', 60, {})).toBe(
      'sf_session=v; Path=/v1/dashboard; Max-Age=60; HttpOnly; SameSite=Strict',
    );
    expect(cookie('sf_session', 'v', 60, { 'X-Forwarded-Proto': 'https' })).toMatch(/; Secure$/);
  });

  it('names the session cookie __Host-sf_session over https (Path=/, Secure), else after the runtime and the session', () => {
    const https = { 'X-Forwarded-Proto': 'https' };
    expect(sessionCookieName(https, 'secret-a', 'token-1')).toBe('__Host-sf_session');
    expect(cookie('__Host-sf_session', 'v', 60, https)).toBe(
      '__Host-sf_session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Strict; Secure',
    );
    const local = sessionCookieName({}, 'secret-a', 'token-1');
    const [runtime] = local.split('_').slice(2);
    expect(local).toMatch(/^sf_session_[0-9a-f]{16}_[0-9a-f]{16}$/);
    expect(sessionCookieName({}, 'secret-a', 'token-1')).toBe(local);
    // Another session of the same runtime: the same runtime tag, another name.
    expect(sessionCookieName({}, 'secret-a', 'token-2')).not.toBe(local);
    expect(sessionCookieName({}, 'secret-a', 'token-2')).toMatch(new RegExp(`^sf_session_${runtime}_`));
    // Another runtime (another link secret): another runtime tag.
    expect(sessionCookieName({}, 'secret-b', 'token-1')).not.toMatch(new RegExp(`^sf_session_${runtime}_`));
  });

  it("reads only this runtime's session cookies, each under the name it gave that token", () => {
    const mine = sessionCookieName({}, 'secret-a', 'token-1');
    const other = sessionCookieName({}, 'secret-a', 'token-2');
    const elsewhere = sessionCookieName({}, 'secret-b', 'token-3');
    const header = (cookie: string) => ({ cookie });

    expect(sessionCookies(header(`${mine}=token-1; ${elsewhere}=token-3; x=1`), 'secret-a')).toEqual([
      { name: mine, token: 'token-1' },
    ]);
    // A token under a name this runtime gave another token: not a session cookie of it.
    expect(sessionCookies(header(`${mine}=token-2`), 'secret-a')).toEqual([]);
    expect(sessionCookies(header(`${elsewhere}=token-3`), 'secret-a')).toEqual([]);
    // Two: the caller trusts neither.
    expect(sessionCookies(header(`${mine}=token-1; ${other}=token-2`), 'secret-a')).toHaveLength(2);
    expect(sessionCookies({ 'X-Forwarded-Proto': 'https', cookie: '__Host-sf_session=t' }, 'secret-a')).toEqual([
      { name: '__Host-sf_session', token: 't' },
    ]);
  });

  it('sends several Set-Cookie headers as multiValueHeaders, the one in headers first', () => {
    const answer = withCookies({ statusCode: 303, headers: { Location: '/', 'Set-Cookie': 'a=1' }, body: '' }, [
      'b=; Max-Age=0',
    ]);

    expect(answer.headers).toEqual({ Location: '/' });
    expect(answer.multiValueHeaders).toEqual({ 'Set-Cookie': ['a=1', 'b=; Max-Age=0'] });
  });
});

describe('flash', () => {
  const flash = { kind: 'notice' as const, text: 'Key made.', secret: { label: 'API key', value: 'sf_test_secret' } };

  it('is sealed: the cookie does not show the secret, and opens only with the same session secret', () => {
    const header = sealFlash(flash, 'csrf-of-session-a', {});
    const value = header.slice(`${FLASH_COOKIE}=`.length).split(';')[0] ?? '';

    expect(header).not.toContain('sf_test_secret');
    expect(openFlash(value, 'csrf-of-session-a')).toEqual(flash);
    expect(openFlash(value, 'csrf-of-session-b')).toBeNull();
    expect(openFlash(`${value.slice(0, -2)}AA`, 'csrf-of-session-a')).toBeNull();
    expect(openFlash('garbage', 'csrf-of-session-a')).toBeNull();
    expect(openFlash(undefined, 'csrf-of-session-a')).toBeNull();
  });

  it('is for the page its redirect names (no query, no trailing slash); one sealed without a page is for any', () => {
    expect(flashTarget('/webhooks/wh_1?tab=settings#log')).toBe('/webhooks/wh_1');
    expect(flashTarget('/')).toBe('');
    expect(flashTarget('')).toBe('');
    const to = { ...flash, to: flashTarget('/api-keys?new=1') };

    expect(flashIsFor(to, '/api-keys')).toBe(true);
    expect(flashIsFor(to, '/api-keys/')).toBe(true);
    expect(flashIsFor(to, '/')).toBe(false);
    expect(flashIsFor(to, '/emails/em_1/preview')).toBe(false);
    expect(flashIsFor({ ...flash, to: '' }, '/')).toBe(true);
    expect(flashIsFor(flash, '/anything')).toBe(true);
  });
});
