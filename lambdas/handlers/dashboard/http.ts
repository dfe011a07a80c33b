// HTTP plumbing of the dashboard: HTML responses with the security headers, redirects, cookies, form bodies,
// the same-origin check, and escaping. Nothing here knows a page.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { escapeHtml } from '../http/pages';
import { headerValue } from '../middleware/caller';

export { escapeHtml };

/** Every dashboard URL begins with this (the stage, then the dashboard's resource). */
export const BASE = '/v1/dashboard';
const HOST_SESSION_COOKIE = '__Host-sf_session';
const tag = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex').slice(0, 16);
/** The local runtime's cookies begin with this: its link secret's tag (another runtime's are never looked at). */
const runtimePrefix = (secret: string) => `sf_session_${tag(secret, 'dashboard session cookie')}_`;

/**
 * The session cookie's name for the session `token`. Over https (always on AWS) it is `__Host-sf_session`: only
 * this secure origin can set it. Over http (the local runtime) cookies do not isolate ports: a page on any port
 * of 127.0.0.1 can set a cookie this port receives, and anyone with an account here can read their own session
 * cookie in their browser. So the name is bound to the runtime (a tag of its link secret) and to the session (a
 * tag of the token under that secret): another runtime's cookie is never read, and an attacker's own cookie,
 * planted from another port, cannot replace a victim's (its name differs), only sit beside it, which
 * `sessionCookies` refuses.
 */
export function sessionCookieName(headers: Readonly<Record<string, string>>, secret: string, token: string): string {
  if (isHttps(headers)) return HOST_SESSION_COOKIE;
  return `${runtimePrefix(secret)}${tag(secret, `dashboard session ${token}`)}`;
}

/** A session cookie this runtime made: its name (to clear it) and its token. */
export interface SessionCookie {
  readonly name: string;
  readonly token: string;
}

/**
 * The session cookies of this runtime a request carries: over http, each cookie whose name is the one
 * `sessionCookieName` gives its value here (a cookie of another runtime, or under a name this runtime did not
 * give that token, is ignored). More than one means another page of this host planted one: trust none.
 */
export function sessionCookies(headers: Readonly<Record<string, string>>, secret: string): SessionCookie[] {
  const all = cookies(headers);
  if (isHttps(headers)) {
    const token = all[HOST_SESSION_COOKIE];
    return token ? [{ name: HOST_SESSION_COOKIE, token }] : [];
  }
  const prefix = runtimePrefix(secret);
  return Object.entries(all)
    .filter(([name, token]) => name.startsWith(prefix) && sameText(name, sessionCookieName(headers, secret, token)))
    .map(([name, token]) => ({ name, token }));
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
export const FLASH_COOKIE = 'sf_flash';
/** A flash message lives until the next page view, and at most this long. */
const FLASH_MAX_AGE_SECONDS = 120;

/** Strict: our own stylesheet and script only, forms post only to us, never framed. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; " +
    "frame-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};

/**
 * An email's HTML body, shown inside the email page's sandboxed frame: the CSP's `sandbox` (no scripts, an
 * opaque origin, no forms) holds even if the page is opened on its own; its inline styles and data: images
 * show, nothing is fetched (no remote image, so no open is tracked by looking), and only our pages may frame it.
 */
export const PREVIEW_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; " +
    "frame-ancestors 'self'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'SAMEORIGIN',
};

/** `markup` is trusted: callers escape every value they put in it (the `html` tag below does). */
export function htmlResponse(markup: string, statusCode = 200, headers: Record<string, string> = {}) {
  return {
    statusCode,
    headers: { 'Content-Type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...headers },
    body: markup,
  } satisfies APIGatewayProxyResult;
}

/** The answer with these Set-Cookie headers (several: API Gateway's multiValueHeaders), beside any it has. */
export function withCookies(result: APIGatewayProxyResult, setCookies: readonly string[]): APIGatewayProxyResult {
  if (setCookies.length === 0) return result;
  const { 'Set-Cookie': own, ...headers } = (result.headers ?? {}) as Record<string, string>;
  return {
    ...result,
    headers,
    multiValueHeaders: { ...result.multiValueHeaders, 'Set-Cookie': [...(own ? [own] : []), ...setCookies] },
  };
}

/** Post/Redirect/Get: 303 so the browser follows with a GET. */
export function redirect(location: string, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode: 303, headers: { Location: location, ...SECURITY_HEADERS, ...headers }, body: '' };
}

/** Markup that is already safe (built by `html`, or a constant). */
export class Safe {
  constructor(readonly markup: string) {}
  toString() {
    return this.markup;
  }
}

type Interpolation = Safe | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Safe) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Template tag: every interpolated value is escaped unless it is already Safe markup. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Safe {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Safe(out);
}

export function cookies(headers: Readonly<Record<string, string>>): Record<string, string> {
  const found: Record<string, string> = {};
  const twice = new Set<string>();
  for (const part of (headerValue(headers, 'cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    if (!name || twice.has(name)) continue;
    // A cookie sent twice (one planted by another page of this host with a longer path) is trusted in neither copy.
    if (Object.hasOwn(found, name)) {
      twice.add(name);
      delete found[name];
    } else found[name] = part.slice(at + 1).trim();
  }
  return found;
}

/** Over https (API Gateway says so in X-Forwarded-Proto; always on AWS), cookies are Secure. */
export function isHttps(headers: Readonly<Record<string, string>>): boolean {
  return (headerValue(headers, 'x-forwarded-proto') ?? '').split(',')[0]?.trim() === 'https';
}

export function cookie(
  name: string,
  value: string,
  maxAgeSeconds: number,
  headers: Readonly<Record<string, string>>,
): string {
  const secure = isHttps(headers) ? '; Secure' : '';
  // A __Host- cookie must have Path=/ (and Secure, no Domain), or browsers refuse it.
  const path = name.startsWith('__Host-') ? '/' : BASE;
  return `${name}=${value}; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

/**
 * A form post from another site: refused. Browsers say where a request comes from in Sec-Fetch-Site (every
 * current browser), else in Origin. Under our `Referrer-Policy: no-referrer` Chromium sends `Origin: null` even
 * for our own forms, so Sec-Fetch-Site decides first; a bare `null` origin without it is refused. A request with
 * neither (not a browser) passes this check and still needs the session's CSRF token.
 */
export function sameOrigin(headers: Readonly<Record<string, string>>): boolean {
  const site = headerValue(headers, 'sec-fetch-site');
  if (site !== undefined) return site === 'same-origin';
  const origin = headerValue(headers, 'origin');
  if (origin === undefined) return true;
  const host = headerValue(headers, 'host');
  try {
    return origin !== 'null' && !!host && new URL(origin).host === host;
  } catch {
    return false;
  }
}

export function formBody(raw: string | null): URLSearchParams {
  return new URLSearchParams(raw ?? '');
}

export interface Flash {
  readonly kind: 'notice' | 'error';
  readonly text: string;
  /** A secret shown once (a new key, a signing secret): a copy button goes with it. */
  readonly secret?: { readonly label: string; readonly value: string };
  /** The API's problem with each field of a refused form (by the field's name), shown next to that field. */
  readonly fields?: Readonly<Record<string, string>>;
  /**
   * The dashboard path (after BASE, no query) of the page the form's redirect lands on: only that page shows the
   * message and clears it, so another dashboard GET in flight (a preview frame, another tab) never consumes it.
   * Absent in a flash sealed by the release before (any page shows it, as that release did).
   */
  readonly to?: string;
}

/** The dashboard path a redirect's location (after BASE) names: no query, no trailing slash. */
export function flashTarget(location: string): string {
  return (location.split(/[?#]/)[0] ?? '').replace(/\/+$/, '');
}

/** Whether the page at `here` (after BASE, as flashTarget gives it) is the one to show this message. */
export function flashIsFor(flash: Flash, here: string): boolean {
  return flash.to === undefined || flash.to === flashTarget(here);
}

/**
 * A flash message survives the redirect in a short cookie, sealed (AES-256-GCM) with a key derived from the
 * session's token (its HttpOnly cookie, which no page ever shows): a secret shown once is never stored anywhere,
 * and the cookie is useless without the session it belongs to. The page it is for (`to`) clears it.
 */
export function sealFlash(flash: Flash, sessionSecret: string, headers: Readonly<Record<string, string>>): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(sessionSecret), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(flash), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return cookie(
    FLASH_COOKIE,
    `${iv.toString('base64url')}.${sealed.toString('base64url')}`,
    FLASH_MAX_AGE_SECONDS,
    headers,
  );
}

export function openFlash(value: string | undefined, sessionSecret: string): Flash | null {
  if (!value) return null;
  const [iv, sealed] = value.split('.');
  if (!iv || !sealed) return null;
  try {
    const data = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', flashKey(sessionSecret), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(data.subarray(data.length - 16));
    const text = Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString(
      'utf8',
    );
    const flash = JSON.parse(text) as Flash;
    return flash.kind === 'notice' || flash.kind === 'error' ? flash : null;
  } catch {
    return null;
  }
}

export const clearFlash = (headers: Readonly<Record<string, string>>) => cookie(FLASH_COOKIE, '', 0, headers);

function flashKey(sessionSecret: string): Buffer {
  return createHash('sha256').update(`sendflow-dashboard-flash:${sessionSecret}`, 'utf8').digest();
}

/** The API's base URL as this request reached it (its host, http or https): `https://api.example.com/v1`. */
export function apiBaseUrl(headers: Readonly<Record<string, string>>): string | undefined {
  const host = headerValue(headers, 'host');
  if (!host || !/^[A-Za-z0-9.:[\]-]+$/.test(host)) return undefined;
  return `${isHttps(headers) ? 'https' : 'http'}://${host}${BASE.replace(/\/dashboard$/, '')}`;
}

/** A dashboard URL with a query string; empty values are left out. */
export function href(path: string, query: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
  const qs = params.toString();
  return `${BASE}${path}${qs ? `?${qs}` : ''}`;
}
