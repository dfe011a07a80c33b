// The page shell every dashboard page shares: landmarks, navigation, the live/test switch, sign-out, and the
// flash message of the last action. Also the small building blocks pages share (forms with their CSRF field).
import type { Mode } from '../../domain/api-keys';
import { tokens } from './components';
import { BASE, type Flash, html, type Safe } from './http';

export interface PageContext {
  readonly accountId: string;
  readonly mode: Mode;
  readonly plan: string;
  readonly csrf: string;
  readonly flash: Flash | null;
  /** The API's base URL as this request reached it (`http://127.0.0.1:3000/v1`), for commands a page shows. */
  readonly apiUrl?: string;
  /** The account's address for notices (the settings page), read with the session; null or absent: none. */
  readonly noticeEmail?: string | null;
}

/** What a page puts in the shell: its section (the navigation entry), title, header actions and tabs. */
export interface PageView {
  /** The navigation entry it belongs to ('' = overview). */
  readonly section: string;
  readonly title: string;
  readonly content: Safe;
  /** Buttons and links beside the title (the page's own actions). */
  readonly actions?: Safe;
  /** Under the title: the page's tabs (`tabs`), each its own view. */
  readonly tabs?: Safe;
  /** A link back up, above the title: [dashboard path, label]. */
  readonly back?: readonly [string, string];
}

/** The API reference page (GET /v1/reference), served next to the dashboard. */
const API_REFERENCE = '/v1/reference';

const NAV = [
  ['', 'Overview'],
  ['/webhooks', 'Webhooks'],
  ['/emails', 'Emails'],
  ['/templates', 'Templates'],
  ['/received', 'Received'],
  ['/domains', 'Domains'],
  ['/contacts', 'Contacts'],
  ['/api-keys', 'API keys'],
  ['/api-requests', 'API requests'],
  ['/settings', 'Settings'],
] as const;

function navLinks(section: string): Safe {
  return html`<ul>${NAV.map(
    ([path, label]) =>
      html`<li><a href="${BASE}${path}"${path === section ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )}<li><a href="${API_REFERENCE}">API reference</a></li></ul>`;
}

/**
 * A whole page: the sidebar of sections (at phone width a "Menu" that opens without JavaScript, a <details>),
 * the account bar (account, mode, switch, sign out: once on the page), then the page's header (title, actions,
 * tabs) and its content, whose top-level sections are cards.
 */
export function layout(ctx: PageContext, view: PageView): Safe {
  const other: Mode = ctx.mode === 'live' ? 'test' : 'live';
  const back = view.back ? html`<p class="back"><a href="${BASE}${view.back[0]}">← ${view.back[1]}</a></p>` : '';
  return document(
    `${view.title} · Sendflow`,
    html`<a class="skip" href="#main">Skip to content</a>
<div class="shell mode-${ctx.mode}">
<div class="sidebar"><a class="brand" href="${BASE}">Sendflow</a>
<nav class="side-nav" aria-label="Dashboard">${navLinks(view.section)}</nav></div>
<header class="topbar"><a class="brand brand-top" href="${BASE}">Sendflow</a>
<details class="menu"><summary>Menu</summary><nav aria-label="Dashboard menu">${navLinks(view.section)}</nav></details>
<div class="account"><span class="account-id">Account <span class="mono">${ctx.accountId}</span></span>
<span class="badge mode-badge tone-${ctx.mode === 'live' ? 'ok' : 'warn'}">${ctx.mode === 'live' ? 'Live' : 'Test'} mode</span>
${postForm('/mode', html`<input type="hidden" name="mode" value="${other}"><button type="submit" class="secondary small">Switch to ${other} mode</button>`, ctx.csrf, 'inline')}
${postForm('/sign-out', html`<button type="submit" class="secondary small">Sign out</button>`, ctx.csrf, 'inline')}</div></header>
<main id="main" tabindex="-1">
${flashMessage(ctx.flash)}
<div class="page-head"><div class="page-title">${back}<h1>${tokens(view.title)}</h1></div>${view.actions ? html`<div class="page-actions">${view.actions}</div>` : ''}</div>
${view.tabs ?? ''}
<div class="page-body">${view.content}</div>
</main>
</div>`,
  );
}

/** A page's tabs: each a link to its own view (a sub-route), the current one marked. */
export function tabs(label: string, items: readonly (readonly [string, string])[], current: string): Safe {
  return html`<nav class="tabs" aria-label="${label}"><ul>${items.map(
    ([path, name]) =>
      html`<li><a href="${BASE}${path}"${path === current ? html` aria-current="page"` : ''}>${name}</a></li>`,
  )}</ul></nav>`;
}

/** A page outside a session (sign-in, signed out): no navigation, no account data. */
export function bare(title: string, content: Safe): Safe {
  return document(
    `${title} · Sendflow`,
    html`<main id="main" class="bare"><p class="brand">Sendflow</p><div class="card"><h1>${title}</h1>${content}</div></main>`,
  );
}

function document(title: string, body: Safe): Safe {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${BASE}/assets/app.css"><script src="${BASE}/assets/app.js" defer></script>
</head><body>${body}</body></html>`;
}

function flashMessage(flash: Flash | null): Safe | '' {
  if (!flash) return '';
  const role = flash.kind === 'error' ? 'alert' : 'status';
  const secret = flash.secret
    ? html`<p class="secret"><span id="secret-label">${flash.secret.label}:</span> <code id="secret-value">${flash.secret.value}</code>
<button type="button" data-copy="secret-value">Copy</button></p><p>It is shown once: copy it now.</p>`
    : '';
  return html`<div class="flash ${flash.kind}" role="${role}"><p>${prose(flash.text)}</p>${secret}</div>`;
}

/** Text with `code` spans (as the API words its errors: "`name` must not be empty."), as markup. */
export function prose(text: string): Safe {
  return html`${text.split(/`([^`]*)`/).map((part, i) => (i % 2 ? html`<code>${part}</code>` : tokens(part)))}`;
}

/**
 * A form field's error component: after a refused submit, the API's own sentence about the field `name` (its
 * top-level name in the request body), next to it. `id` is the input's; the input takes `invalidAttrs`.
 */
export function fieldError(ctx: PageContext, name: string, id: string): Safe | '' {
  const message = ctx.flash?.fields?.[name];
  return message ? html`<p class="field-error" id="${id}-error">${prose(message)}</p>` : '';
}

/** The attributes that tie an input to its error (aria-invalid, aria-describedby), when it has one. */
export function invalidAttrs(ctx: PageContext, name: string, id: string): Safe | '' {
  return ctx.flash?.fields?.[name] ? html` aria-invalid="true" aria-describedby="${id}-error"` : '';
}

/** A labelled text input with its error: the one form field component the dashboard's forms use. */
export function textField(
  ctx: PageContext,
  field: { id: string; name: string; label: string; type?: string; attrs?: Safe },
): Safe {
  const { id, name, label, type = 'text', attrs = html`` } = field;
  return html`<div class="field"><label for="${id}">${label}</label><input id="${id}" name="${name}" type="${type}"${attrs}${invalidAttrs(ctx, name, id)}>${fieldError(ctx, name, id)}</div>`;
}

/** A POST form to a dashboard action, with the session's CSRF token. */
export function postForm(action: string, fields: Safe, csrf: string, className = ''): Safe {
  return html`<form method="post" action="${BASE}${action}"${className ? html` class="${className}"` : ''}><input type="hidden" name="csrf" value="${csrf}">${fields}</form>`;
}

/** A one-button form, e.g. Delete or Retry. */
export function actionButton(
  action: string,
  label: string,
  csrf: string,
  style = 'secondary',
  extra: Safe | '' = '',
): Safe {
  return postForm(action, html`${extra}<button type="submit" class="${style}">${label}</button>`, csrf, 'inline');
}

/**
 * A destructive action's first step: a link to its confirmation page (a GET, which changes nothing), styled as
 * a button. The act itself is the confirmation page's POST (confirmForm): one click never deletes or revokes.
 */
export function dangerLink(path: string, label: string, size: '' | 'small' = ''): Safe {
  return html`<a class="button danger${size ? ` ${size}` : ''}" href="${BASE}${path}">${label}</a>`;
}

/** The confirmation page's form: the second POST, which alone carries `confirm=yes`, and a way back. */
export function confirmForm(action: string, label: string, csrf: string, cancelPath: string): Safe {
  return html`<div class="actions">${postForm(
    action,
    html`<input type="hidden" name="confirm" value="yes"><button type="submit" class="danger">${label}</button>`,
    csrf,
    'inline',
  )} <a href="${BASE}${cancelPath}">Cancel</a></div>`;
}

/** Whether a destructive action's POST came from its confirmation page (else it only leads there). */
export const isConfirmed = (form: URLSearchParams) => form.get('confirm') === 'yes';

export function when(iso: unknown): string {
  if (typeof iso !== 'string' || !iso) return '—';
  return iso
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z')
    .replace(/Z$/, ' UTC');
}
