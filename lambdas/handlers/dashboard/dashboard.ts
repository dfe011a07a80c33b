// The dashboard's request handler (the manifest's dashboard routes): assets, sign-in and sign-out, the session
// check, the CSRF and same-origin checks on every POST, then the page modules. Pages reach data only through
// the API client; the session store is the one thing read here directly.
import type { APIGatewayProxyResult } from 'aws-lambda';
import { consumeDashboardRequest } from '../../app/dashboard/budget';
import { type InlineImageDeps, type InlineImageSource, inlineImages } from '../../app/dashboard/inline-images';
import { NOTICE_EMAIL_FIELD, setNoticeAddress } from '../../app/dashboard/notice-address';
import { checkCsrf, currentSession, signOut, signOutEverywhere, switchMode } from '../../app/dashboard/sessions';
import { previewSignIn, redeemSignIn, type SignInDeps } from '../../app/dashboard/sign-in';
import type { LinkSigner } from '../../app/emails/ports';
import type { RateLimitCounter } from '../../app/ports';
import { MODES, type Mode } from '../../domain/api-keys';
import { DASHBOARD_REQUESTS_PER_SECOND, SESSION_TTL_MS } from '../../domain/dashboard/session';
import type { DashboardRouteId } from '../../manifest';
import type { PublicRouteHandler, PublicRouteRequest } from '../http/context';
import { ApiCallError, type ApiInvoke, apiClient } from './api-client';
import { ASSETS } from './assets';
import {
  apiBaseUrl,
  BASE,
  clearFlash,
  cookie,
  cookies,
  FLASH_COOKIE,
  type Flash,
  flashIsFor,
  flashTarget,
  formBody,
  html,
  htmlResponse,
  openFlash,
  redirect,
  SECURITY_HEADERS,
  sameOrigin,
  sealFlash,
  sessionCookieName,
  sessionCookies,
  withCookies,
} from './http';
import { bare, layout, type PageContext } from './layout';
import { apiKeyRoutes } from './pages/api-keys';
import { apiRequestRoutes } from './pages/api-requests';
import { contactRoutes } from './pages/contacts';
import { domainRoutes } from './pages/domains';
import { emailRoutes } from './pages/emails';
import { eventTypeRoutes } from './pages/event-types';
import { overviewRoutes } from './pages/overview';
import { receivedRoutes } from './pages/received';
import { settingsRoutes } from './pages/settings';
import { templateRoutes } from './pages/templates';
import { webhookRoutes } from './pages/webhooks';
import { plainMessage, plainProblem } from './plain-words';
import type { DashboardRequest, DashboardRoute } from './routes';

export interface DashboardDeps extends SignInDeps, InlineImageDeps {
  /** The deployment's link secret: the local session cookie's name derives from it (sessionCookieName). */
  readonly links: Pick<LinkSigner, 'secret'>;
  /** The rate-limit windows (the API's store): the dashboard's own budget is a window there. */
  readonly counter: RateLimitCounter;
}

const PAGES: readonly DashboardRoute[] = [
  ...overviewRoutes,
  ...webhookRoutes,
  ...eventTypeRoutes,
  ...emailRoutes,
  ...templateRoutes,
  ...receivedRoutes,
  ...apiKeyRoutes,
  ...domainRoutes,
  ...contactRoutes,
  ...apiRequestRoutes,
  ...settingsRoutes,
];

/** `invoke` is the API handler itself, resolved lazily (the dashboard is one of its routes). */
export function dashboardHandlers(
  deps: DashboardDeps,
  invoke: () => ApiInvoke,
): Record<DashboardRouteId, PublicRouteHandler> {
  const get: PublicRouteHandler = (request) => handle('GET', request.params.proxy ?? '', request);
  return {
    dashboardHome: (request) => handle('GET', '', request),
    dashboardPage: get,
    dashboardAction: (request) => handle('POST', request.params.proxy ?? '', request),
  };

  async function handle(method: 'GET' | 'POST', rawPath: string, request: PublicRouteRequest) {
    const path = rawPath.replace(/\/+$/, '');
    const asset = Object.hasOwn(ASSETS, path) ? ASSETS[path] : undefined;
    if (method === 'GET' && asset) {
      return { statusCode: 200, headers: { 'Content-Type': asset.type, ...SECURITY_HEADERS }, body: asset.body };
    }
    const { headers } = request;
    if (path === 'sign-in') {
      if (method === 'POST') return signIn(request);
      const link = await previewSignIn(deps, request.query.token);
      return link ? signInPage(request.query.token ?? '', link) : invalidLink();
    }
    if (method === 'GET' && path === 'signed-out') {
      return htmlResponse(
        bare('Signed out', html`<p>You are signed out. Ask your administrator for a new sign-in link.</p>`).markup,
      );
    }
    const carried = sessionCookies(headers, await deps.links.secret());
    // Two sessions of this runtime in one browser: another page of this host planted one (locally any port of
    // 127.0.0.1 can). Trust neither, and clear both, so the planted one does not outlive this answer.
    if (carried.length > 1) {
      return withCookies(
        signInRequired(true),
        carried.map((found) => cookie(found.name, '', 0, headers)),
      );
    }
    const sessionCookie = carried[0]?.name ?? '';
    const sessionToken = carried[0]?.token;
    const signedIn = await currentSession(deps, sessionToken);
    if (!signedIn) return signInRequired();
    const { session, principal, noticeEmail } = signedIn;
    const budget = await consumeDashboardRequest(deps, principal.accountId);
    if (budget.limited) return tooFast(budget.retryAfter);
    const form = method === 'POST' ? formBody(request.rawBody) : new URLSearchParams();
    if (method === 'POST' && (!sameOrigin(headers) || !checkCsrf(session, form.get('csrf') ?? undefined))) {
      return htmlResponse(
        bare(
          'Request refused',
          html`<p>This form is out of date or came from another site. Reload the page and try again.</p>`,
        ).markup,
        403,
      );
    }
    if (method === 'POST' && path === 'sign-out') {
      await signOut(deps, session);
      return redirect(`${BASE}/signed-out`, { 'Set-Cookie': cookie(sessionCookie, '', 0, headers) });
    }
    if (method === 'POST' && path === 'sign-out-everywhere') {
      await signOutEverywhere(deps, session);
      return redirect(`${BASE}/signed-out`, { 'Set-Cookie': cookie(sessionCookie, '', 0, headers) });
    }
    if (method === 'POST' && path === 'settings/notice-email') {
      // Dashboard-only, like sign-out everywhere (no API route): the answer is the settings page with a message.
      const result = await setNoticeAddress(deps, principal.accountId, form.get(NOTICE_EMAIL_FIELD) ?? '');
      const flash: Flash = result.ok
        ? {
            kind: 'notice',
            text: result.noticeEmail
              ? `Notices now go to ${result.noticeEmail}.`
              : 'The address for notices is removed: Sendflow sends this account no notices.',
          }
        : {
            kind: 'error',
            text: 'The address for notices was not changed.',
            fields: { [NOTICE_EMAIL_FIELD]: result.problem },
          };
      const to = '/settings';
      return redirect(`${BASE}${to}`, {
        'Set-Cookie': sealFlash({ ...flash, to: flashTarget(to) }, sessionToken ?? '', headers),
      });
    }
    if (method === 'POST' && path === 'mode') {
      const mode = form.get('mode');
      if ((MODES as readonly string[]).includes(mode ?? '')) await switchMode(deps, session, mode as Mode);
      return redirect(BASE);
    }
    const flashValue = cookies(headers)[FLASH_COOKIE];
    // Flash messages are sealed with the session's own token (the HttpOnly cookie, never in a page). Only the page
    // the form's redirect lands on opens one: another dashboard GET in flight (a preview frame, another tab)
    // leaves it for that page.
    const opened = method === 'GET' ? openFlash(flashValue, sessionToken ?? '') : null;
    const flash = opened && flashIsFor(opened, `/${path}`) ? opened : null;
    const page: PageContext = {
      accountId: principal.accountId,
      mode: principal.mode,
      plan: principal.plan,
      csrf: session.csrf,
      flash,
      apiUrl: apiBaseUrl(headers),
      noticeEmail,
    };
    // The message a page shows is shown once: its cookie goes (and so does one no session of ours can open).
    const shown: Record<string, string> =
      flash || (method === 'GET' && flashValue && !opened) ? { 'Set-Cookie': clearFlash(headers) } : {};
    const api = apiClient(invoke(), principal, 'dashboard', () => deps.clock.now());
    for (const candidate of PAGES) {
      const found = candidate.method === method ? candidate.pattern.exec(path) : null;
      if (!found) continue;
      const params = found.slice(1).map((p) => p ?? '');
      const dashboardRequest = {
        api,
        page,
        params,
        query: request.query,
        form,
        now: deps.clock.now(),
        inlineImages: (source: InlineImageSource, emailId: string, wanted: ReadonlySet<string>, htmlChars: number) =>
          inlineImages(deps, principal, source, emailId, wanted, htmlChars),
      };
      return candidate.method === 'GET'
        ? servePage(candidate, dashboardRequest, shown)
        : runAction(candidate, dashboardRequest, (flash, to) =>
            sealFlash({ ...flash, to: flashTarget(to) }, sessionToken ?? '', headers),
          );
    }
    return htmlResponse(
      layout(page, { section: '', title: 'Page not found', content: html`<p>There is no such page.</p>` }).markup,
      404,
      shown,
    );
  }

  async function signIn(request: PublicRouteRequest): Promise<APIGatewayProxyResult> {
    if (!sameOrigin(request.headers)) {
      return htmlResponse(bare('Request refused', html`<p>This form came from another site.</p>`).markup, 403);
    }
    const redeemed = await redeemSignIn(deps, formBody(request.rawBody).get('token') ?? undefined);
    if (!redeemed) return invalidLink();
    const secret = await deps.links.secret();
    const name = sessionCookieName(request.headers, secret, redeemed.token);
    // The browser's earlier sessions here (or one planted) go: it holds exactly the one it signed in with.
    const earlier = sessionCookies(request.headers, secret).filter((found) => found.name !== name);
    return withCookies(
      redirect(BASE, { 'Set-Cookie': cookie(name, redeemed.token, SESSION_TTL_MS / 1000, request.headers) }),
      earlier.map((found) => cookie(found.name, '', 0, request.headers)),
    );
  }
}

type PageRoute = Extract<DashboardRoute, { method: 'GET' }>;
type ActionRoute = Extract<DashboardRoute, { method: 'POST' }>;

/** A page in the layout; an API refusal (404, 429, …) is a page saying so with its status, never a 500. */
async function servePage(route: PageRoute, request: DashboardRequest, headers: Record<string, string>) {
  const { page } = request;
  try {
    const result = await route.page(request);
    // A frame's document or a download shows no message: it leaves the flash cookie to the page it is for.
    if (result.response) return result.response;
    return htmlResponse(layout(page, result).markup, 200, headers);
  } catch (error) {
    if (!(error instanceof ApiCallError) || error.status >= 500) throw error;
    const content = html`<p role="alert">${error.message}</p>`;
    return htmlResponse(layout(page, { section: '', title: 'Not available', content }).markup, error.status, headers);
  }
}

/** Post/Redirect/Get: 303 to the action's page, or back with the API's message when the API refused. */
async function runAction(route: ActionRoute, request: DashboardRequest, seal: (flash: Flash, to: string) => string) {
  try {
    const result = await route.action(request);
    return redirect(`${BASE}${result.to}`, result.flash ? { 'Set-Cookie': seal(result.flash, result.to) } : {});
  } catch (error) {
    if (!(error instanceof ApiCallError) || error.status >= 500) throw error;
    const back = route.back(request.params);
    return redirect(`${BASE}${back}`, { 'Set-Cookie': seal(refusal(error, route.labels), back) });
  }
}

/** How many of a refusal's field problems travel in the flash cookie, and how long each may be (4 KB cookies). */
const FLASH_FIELDS = 6;
const FLASH_TEXT = 400;

/** A refused form's flash: in plain words at the top, and each field's problem kept for that field. */
function refusal(error: ApiCallError, labels: Readonly<Record<string, string>> = {}): Flash {
  const clip = (text: string) => (text.length > FLASH_TEXT ? `${text.slice(0, FLASH_TEXT)}…` : text);
  const fields: Record<string, string> = {};
  for (const { path, message } of error.details) {
    const field = path.split('.')[0] ?? '';
    if (field && !Object.hasOwn(fields, field) && Object.keys(fields).length < FLASH_FIELDS)
      fields[field] = clip(plainProblem(path, message, labels));
  }
  return {
    kind: 'error',
    text: clip(plainMessage(error, labels)),
    ...(Object.keys(fields).length ? { fields } : {}),
  };
}

/**
 * GET never redeems: link previews and scanners fetch links, so signing in takes the button's POST. The page
 * names the account and mode the link is for, so a link someone forwarded cannot sign you in to theirs unseen.
 */
function signInPage(token: string, link: { accountId: string; mode: Mode }): APIGatewayProxyResult {
  return htmlResponse(
    bare(
      'Sign in to Sendflow',
      html`<p>This one-time link signs you in to the Sendflow dashboard for 12 hours, to account
<strong class="mono">${link.accountId}</strong> in ${link.mode} mode. Sign in only if that is your account.</p>
<form method="post" action="${BASE}/sign-in"><input type="hidden" name="token" value="${token}"><button type="submit">Sign in</button></form>`,
    ).markup,
  );
}

function invalidLink(): APIGatewayProxyResult {
  return htmlResponse(
    bare(
      'Sign-in link not valid',
      html`<p role="alert">This sign-in link is invalid, has expired (links last 15 minutes) or was already used. Ask for a new one.</p>`,
    ).markup,
    400,
  );
}

/** Past the dashboard's own budget: said as the dashboard's limit, not the API's (the keys' limit is untouched). */
function tooFast(retryAfter: number): APIGatewayProxyResult {
  return htmlResponse(
    bare(
      'Too many pages at once',
      html`<p role="alert">This account's dashboard shows at most ${DASHBOARD_REQUESTS_PER_SECOND} pages a second, across its sessions. Wait a second and reload. Your API keys' rate limit is not affected.</p>`,
    ).markup,
    429,
    { 'Retry-After': String(retryAfter) },
  );
}

/** `planted`: the browser held two sessions (one planted by another page of this host); both were signed out. */
function signInRequired(planted = false): APIGatewayProxyResult {
  const why = planted
    ? html`<p>This browser held two sessions of this dashboard, so another page of this host may have planted one: both are signed out.</p>`
    : '';
  return htmlResponse(
    bare(
      'Sign-in required',
      html`${why}<p>Your session has ended or you are not signed in. Open a new sign-in link (<code>npm run admin -- dashboard-link --account &lt;id&gt;</code>).</p>`,
    ).markup,
    401,
  );
}
