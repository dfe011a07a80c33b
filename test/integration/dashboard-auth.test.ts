// The dashboard's sign-in, session cookie and CSRF over real HTTP on the local runtime: GET never redeems a
// link, POST redeems it once; the cookie's attributes; every POST needs the session's CSRF token and a
// same-origin request; without a session no page shows account data; security headers on every page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;

beforeAll(async () => {
  rt = await startTestRuntime();
});

afterAll(async () => {
  await rt?.stop();
});

const dash = (path = '') => `${rt.url}/dashboard${path}`;

async function linkToken(accountId: string): Promise<string> {
  const { url } = await createSignInLink(rt.services, { accountId, mode: 'test', baseUrl: rt.url });
  return new URL(url).searchParams.get('token') ?? '';
}

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(dash(path), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** The local session cookie's name, as a signed-in browser learns it (from its own Set-Cookie). */
async function cookieName(): Promise<string> {
  const { accountId } = await rt.newKey();
  const { cookie } = await signedIn(accountId);
  return cookie.split('=')[0] as string;
}

async function signedIn(accountId: string, headers: Record<string, string> = {}) {
  const res = await post('/sign-in', { token: await linkToken(accountId) }, headers);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0] ?? '';
  const page = await (await fetch(dash(), { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  return { res, setCookie, cookie, csrf };
}

describe('sign-in', () => {
  it('GET shows a button and never redeems; POST redeems once and sets the session cookie', async () => {
    // Arrange
    const { accountId } = await rt.newKey();
    const token = await linkToken(accountId);

    // Act
    const preview = await fetch(dash(`/sign-in?token=${token}`));
    const previewAgain = await fetch(dash(`/sign-in?token=${token}`));
    const first = await post('/sign-in', { token });
    const second = await post('/sign-in', { token });

    // Assert
    expect(preview.status).toBe(200);
    const shown = await previewAgain.text();
    expect(shown).toContain('Sign in</button>');
    // It names the account and mode the link is for: a forwarded link cannot sign you in to another's unseen.
    expect(shown).toContain(accountId);
    expect(shown).toContain('test mode');
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/v1/dashboard');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^sf_session_[0-9a-f]{16}_[0-9a-f]{16}=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/v1/dashboard');
    expect(cookie).toContain('Max-Age=43200');
    expect(cookie).not.toContain('Secure');
    expect(second.status).toBe(400);
    expect(second.headers.get('set-cookie')).toBeNull();
    expect(await second.text()).toContain('already used');
    const usedPreview = await fetch(dash(`/sign-in?token=${token}`));
    expect(usedPreview.status).toBe(400);
    expect(await usedPreview.text()).not.toContain(accountId);
  });

  it('marks the cookie Secure when the request came over https', async () => {
    const { accountId } = await rt.newKey();
    const { setCookie } = await signedIn(accountId, { 'X-Forwarded-Proto': 'https' });
    expect(setCookie).toContain('; Secure');
  });

  it('refuses a sign-in posted from another site', async () => {
    const { accountId } = await rt.newKey();
    const token = await linkToken(accountId);

    const crossSite = await post('/sign-in', { token }, { 'Sec-Fetch-Site': 'cross-site' });
    const otherOrigin = await post('/sign-in', { token }, { Origin: 'https://evil.example' });
    const stillValid = await post('/sign-in', { token });

    expect(crossSite.status).toBe(403);
    expect(otherOrigin.status).toBe(403);
    expect(stillValid.status).toBe(303);
  });
});

describe('without a session', () => {
  it('every page answers 401 with a sign-in-required page and no account data', async () => {
    const { accountId, key } = await rt.newKey();
    const made = await rt.call('/webhooks', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/h', events: ['email.sent'] }),
    });
    const { id } = (await made.json()) as { id: string };

    for (const path of ['', '/webhooks', `/webhooks/${id}`, '/api-keys', '/emails', '/domains', '/contacts']) {
      for (const cookie of [
        '',
        'sf_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        `${await cookieName()}=AAAA`,
      ]) {
        const res = await fetch(dash(path), { headers: cookie ? { cookie } : {} });
        const body = await res.text();
        expect(res.status, path).toBe(401);
        expect(body).toContain('Sign-in required');
        expect(body).not.toContain(accountId);
        expect(body).not.toContain(id);
      }
    }
    const action = await post('/webhooks', { url: 'http://127.0.0.1:9/x', events: 'email.sent' });
    expect(action.status).toBe(401);
  });
});

describe('CSRF', () => {
  it("refuses a POST without the session's token, with another's, or from another site; changes nothing", async () => {
    const { accountId, key } = await rt.newKey();
    const mine = await signedIn(accountId);
    const other = await signedIn((await rt.newKey()).accountId);
    const fields = { url: 'http://127.0.0.1:9/csrf', events: 'email.sent' };

    const missing = await post('/webhooks', fields, { cookie: mine.cookie });
    const foreign = await post('/webhooks', { ...fields, csrf: other.csrf }, { cookie: mine.cookie });
    const crossSite = await post(
      '/webhooks',
      { ...fields, csrf: mine.csrf },
      { cookie: mine.cookie, 'Sec-Fetch-Site': 'cross-site' },
    );
    const nullOrigin = await post('/webhooks', { ...fields, csrf: mine.csrf }, { cookie: mine.cookie, Origin: 'null' });

    for (const res of [missing, foreign, crossSite, nullOrigin]) expect(res.status).toBe(403);
    const list = (await (await rt.call('/webhooks', { key })).json()) as { data: unknown[] };
    expect(list.data).toEqual([]);

    const accepted = await post(
      '/webhooks',
      { ...fields, csrf: mine.csrf },
      { cookie: mine.cookie, 'Sec-Fetch-Site': 'same-origin' },
    );
    expect(accepted.status).toBe(303);
    expect(((await (await rt.call('/webhooks', { key })).json()) as { data: unknown[] }).data).toHaveLength(1);
  });
});

describe('session', () => {
  it('cannot be switched by a cookie planted from another port of this host (cookies do not isolate ports)', async () => {
    // Arrange: a victim signed in to A; an attacker holds a session of their own account B, and its cookie's
    // name (their own browser shows it).
    const victim = await rt.newKey();
    const attacker = await rt.newKey();
    const a = await signedIn(victim.accountId);
    const b = await signedIn(attacker.accountId);
    const [nameA, tokenA] = a.cookie.split('=') as [string, string];
    const [nameB, tokenB] = b.cookie.split('=') as [string, string];

    // Act: the attacker's page can set any cookie for 127.0.0.1: their own beside the victim's, their token
    // under the victim's name (were it known), or a generic name.
    const beside = await fetch(dash(), { headers: { cookie: `${nameB}=${tokenB}; ${nameA}=${tokenA}` } });
    const underVictimName = await fetch(dash(), { headers: { cookie: `${nameA}=${tokenB}` } });
    const generic = await fetch(dash(), { headers: { cookie: `sf_session=${tokenB}; ${nameA}=${tokenA}` } });
    const genericAlone = await fetch(dash(), { headers: { cookie: `sf_session=${tokenB}` } });

    // Assert: never the attacker's account. Two sessions are trusted in neither and both are cleared.
    const besidePage = await beside.text();
    expect(nameA).not.toBe(nameB);
    expect(beside.status).toBe(401);
    expect(besidePage).toContain('may have planted one');
    expect(besidePage).not.toContain(attacker.accountId);
    expect(beside.headers.getSetCookie().map((c) => c.split(';')[0])).toEqual([`${nameB}=`, `${nameA}=`]);
    expect(underVictimName.status).toBe(401);
    expect(await underVictimName.text()).not.toContain(attacker.accountId);
    expect(generic.status).toBe(200);
    expect(await generic.text()).toContain(victim.accountId);
    expect(genericAlone.status).toBe(401);
  });

  it("a sign-in clears the browser's earlier sessions of this runtime: it holds exactly the new one", async () => {
    const { accountId } = await rt.newKey();
    const earlier = await signedIn(accountId);
    const earlierName = earlier.cookie.split('=')[0];

    const again = await signedIn(accountId, { cookie: earlier.cookie });

    expect(again.res.headers.getSetCookie().map((c) => c.split(';')[0]?.split('=')[0])).toEqual([
      again.cookie.split('=')[0],
      earlierName,
    ]);
    expect(again.res.headers.getSetCookie()[1]).toContain('Max-Age=0');
  });

  it('signs out: the cookie is cleared and the session no longer works', async () => {
    const { accountId } = await rt.newKey();
    const { cookie, csrf } = await signedIn(accountId);

    const out = await post('/sign-out', { csrf }, { cookie });

    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/v1/dashboard/signed-out');
    expect(out.headers.get('set-cookie')).toMatch(/^sf_session_[0-9a-f]{16}_[0-9a-f]{16}=; .*Max-Age=0/);
    expect((await fetch(dash(), { headers: { cookie } })).status).toBe(401);
  });

  it("signs out everywhere: every session of the account ends, in both modes, and no other account's", async () => {
    const { accountId } = await rt.newKey();
    const here = await signedIn(accountId);
    const elsewhere = await signedIn(accountId);
    const other = await signedIn((await rt.newKey()).accountId);

    const out = await post('/sign-out-everywhere', { csrf: here.csrf }, { cookie: here.cookie });

    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/v1/dashboard/signed-out');
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await fetch(dash(), { headers: { cookie: here.cookie } })).status).toBe(401);
    expect((await fetch(dash(), { headers: { cookie: elsewhere.cookie } })).status).toBe(401);
    expect((await fetch(dash(), { headers: { cookie: other.cookie } })).status).toBe(200);
    // Without the CSRF token it is refused and ends nothing.
    const refused = await post('/sign-out-everywhere', {}, { cookie: other.cookie });
    expect(refused.status).toBe(403);
    expect((await fetch(dash(), { headers: { cookie: other.cookie } })).status).toBe(200);
  });

  it('the settings page shows the plan and limits; the webhooks page names the real API URL for npm run listen', async () => {
    const { accountId } = await rt.newKey({ plan: 'growth' });
    const { cookie } = await signedIn(accountId);

    const settings = await fetch(dash('/settings'), { headers: { cookie } });
    const webhooks = await (await fetch(dash('/webhooks'), { headers: { cookie } })).text();

    expect(settings.status).toBe(200);
    const page = await settings.text();
    expect(page).toContain('growth');
    expect(page).toContain('Sign out everywhere');
    expect(webhooks).toContain(`SENDFLOW_API_URL=${rt.url} `);
    expect(webhooks).not.toContain('127.0.0.1:4000');
  });

  it('sets, shows, refuses a malformed and clears the address for notices on the settings page', async () => {
    const { accountId } = await rt.newKey();
    const other = await rt.newKey();
    const { cookie, csrf } = await signedIn(accountId);
    // The settings page as the form's redirect lands on it, carrying the flash cookie the redirect set.
    const landing = async (res: Response) => {
      const flash = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      return (await fetch(dash('/settings'), { headers: { cookie: `${cookie}; ${flash}` } })).text();
    };

    const set = await post('/settings/notice-email', { csrf, notice_email: ' ops@example.com ' }, { cookie });
    const shown = await landing(set);
    const refused = await post('/settings/notice-email', { csrf, notice_email: 'ops at example' }, { cookie });
    const refusedPage = await landing(refused);
    const forged = await post('/settings/notice-email', { notice_email: 'evil@example.net' }, { cookie });
    const stored = await rt.services.accounts.get(accountId);
    const cleared = await post('/settings/notice-email', { csrf, notice_email: '' }, { cookie });
    const clearedPage = await landing(cleared);

    expect(set.status).toBe(303);
    expect(set.headers.get('location')).toBe('/v1/dashboard/settings');
    expect(shown).toContain('Notices now go to ops@<wbr>example.<wbr>com.');
    expect(shown).toContain('<span class="mono">ops@example.com</span>');
    expect(shown).toContain('Remove address');
    // A malformed address changes nothing and says why next to the field.
    expect(refused.status).toBe(303);
    expect(refusedPage).toMatch(/<p class="field-error" id="notice-email-error">[^<]*@/);
    expect(refusedPage).toContain('aria-invalid="true"');
    expect(refusedPage).toContain('<span class="mono">ops@example.com</span>');
    expect(forged.status).toBe(403);
    expect(stored?.noticeEmail).toBe('ops@example.com');
    expect((await rt.services.accounts.get(other.accountId))?.noticeEmail).toBeUndefined();
    expect(clearedPage).toContain('None: Sendflow sends this account no notices.');
    expect((await rt.services.accounts.get(accountId))?.noticeEmail).toBeUndefined();
  });

  it('acts as the account through the API: scopes, rate-limit window and tenant isolation as for a key', async () => {
    const { accountId, key } = await rt.newKey({ mode: 'live' });
    const { cookie } = await signedIn(accountId);
    const made = await rt.call('/webhooks', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/live-only', events: ['email.sent'] }),
    });
    const { id } = (await made.json()) as { id: string };

    // The session is in test mode: the live webhook is another world (404, as for a test key).
    const res = await fetch(dash(`/webhooks/${id}`), { headers: { cookie } });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('live-only');
  });
});

describe('escaping', () => {
  it("shows the account's data escaped: markup in a description or URL is text, never markup", async () => {
    const { accountId, key } = await rt.newKey();
    const made = await rt.call('/webhooks', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        url: 'http://127.0.0.1:9/h?a="><img src=x onerror=alert(1)>',
        events: ['email.sent'],
        description: '<script>alert(1)</script>',
      }),
    });
    const { id } = (await made.json()) as { id: string };
    const { cookie } = await signedIn(accountId);

    const page = await (await fetch(dash(`/webhooks/${id}`), { headers: { cookie } })).text();

    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script>alert(1)');
    expect(page).not.toContain('<img src=x');
  });
});

describe('headers and assets', () => {
  it('serves every page with a strict CSP and no caching, and its CSS and JS from the dashboard', async () => {
    const { accountId } = await rt.newKey();
    const { cookie } = await signedIn(accountId);

    const pages = await Promise.all(
      ['', '/webhooks', '/sign-in?token=x', '/signed-out'].map((p) => fetch(dash(p), { headers: { cookie } })),
    );
    const css = await fetch(dash('/assets/app.css'));
    const js = await fetch(dash('/assets/app.js'));

    for (const res of pages) {
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; " +
          "frame-src 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await js.text()).toContain('navigator.clipboard');
  });
});

describe('hostile requests (security review)', () => {
  it("a path named like an object's own property (constructor, __proto__) is no asset: a page, never a crash", async () => {
    const { accountId } = await rt.newKey();
    const { cookie } = await signedIn(accountId);
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const anonymous = await fetch(dash(`/${name}`));
      const withSession = await fetch(dash(`/${name}`), { headers: { cookie } });
      expect({ name, status: anonymous.status }).toEqual({ name, status: 401 });
      expect({ name, status: withSession.status }).toEqual({ name, status: 404 });
    }
    expect((await fetch(dash('/assets/app.css'))).status).toBe(200);
  });

  it('a recovery window the form cannot read goes back with the API’s message, not a 500', async () => {
    const { accountId, key } = await rt.newKey();
    const hook = await rt.call('/webhooks', {
      key,
      method: 'POST',
      body: JSON.stringify({ url: 'http://127.0.0.1:9/h', events: ['email.sent'] }),
    });
    const { id } = (await hook.json()) as { id: string };
    const { cookie, csrf } = await signedIn(accountId);

    const res = await post(`/webhooks/${id}/recoveries`, { csrf, since: 'garbage' }, { cookie });
    const back = await fetch(dash(`/webhooks/${id}/recovery`), {
      headers: { cookie: `${cookie}; ${(res.headers.get('set-cookie') ?? '').split(';')[0]}` },
    });

    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/v1/dashboard/webhooks/${id}/recovery`);
    const shown = await back.text();
    expect(shown).toContain('role="alert"');
    // In plain words next to its field, and the field is marked.
    expect(shown).toMatch(/<p class="field-error" id="rec-since-error">From [^<]+<\/p>/);
    expect(shown).toContain('aria-invalid="true"');
  });

  it('a message shows on the page its form redirects to, never consumed by another dashboard GET in between', async () => {
    // Arrange: a form's answer (a new key, shown once) and the page its redirect lands on.
    const { accountId } = await rt.newKey();
    const { cookie, csrf } = await signedIn(accountId);
    const created = await post('/api-keys', { csrf, name: 'ci', scopes: 'email:send' }, { cookie });
    const flash = (created.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const target = created.headers.get('location') ?? '';
    const withFlash = { headers: { cookie: `${cookie}; ${flash}` } };

    // Act: other dashboard GETs the browser may make first (another tab, a page not found, an asset), then the
    // redirect's target, then that page again.
    const others = [
      await fetch(dash(), withFlash),
      await fetch(dash('/no-such-page'), withFlash),
      await fetch(dash('/assets/app.css'), withFlash),
    ];
    const landed = await fetch(`${new URL(rt.url).origin}${target}`, withFlash);
    const landedBody = await landed.text();

    // Assert: only the target shows the message and clears it; the others neither show nor clear it.
    expect(flash).toMatch(/^sf_flash=./);
    expect(target).toBe('/v1/dashboard/api-keys');
    for (const other of others) {
      expect(await other.text()).not.toContain('id="secret-value"');
      expect(other.headers.get('set-cookie')).toBeNull();
    }
    expect(landed.status).toBe(200);
    expect(landedBody).toMatch(/id="secret-value">sf_test_/);
    expect(landed.headers.get('set-cookie')).toMatch(/^sf_flash=; .*Max-Age=0/);
  });

  it('a session cookie sent twice (one planted with a longer path) counts as no session', async () => {
    const { accountId } = await rt.newKey();
    const { cookie } = await signedIn(accountId);
    const other = await signedIn((await rt.newKey()).accountId);

    const res = await fetch(dash(), { headers: { cookie: `${other.cookie}; ${cookie}` } });

    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain(accountId);
  });
});
