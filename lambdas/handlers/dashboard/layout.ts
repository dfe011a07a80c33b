// The page shell every dashboard page shares: landmarks, navigation, the live/test switch, sign-out, and the
// flash message of the last action. Also the small building blocks pages share (forms with their CSRF field).
import type { Mode } from '../../domain/api-keys';
import { BASE, type Flash, html, type Safe } from './http';

export interface PageContext {
  readonly accountId: string;
  readonly mode: Mode;
  readonly plan: string;
  readonly csrf: string;
  readonly flash: Flash | null;
}

/** The API reference page (GET /v1/reference), served next to the dashboard. */
const API_REFERENCE = '/v1/reference';

const NAV = [
  ['', 'Overview'],
  ['/webhooks', 'Webhooks'],
  ['/emails', 'Emails'],
  ['/templates', 'Templates'],
  ['/received', 'Received'],
  ['/api-keys', 'API keys'],
  ['/domains', 'Domains'],
  ['/contacts', 'Contacts'],
  ['/api-requests', 'API requests'],
] as const;

/** A whole page; `section` is the NAV entry it belongs to. */
export function layout(ctx: PageContext, section: string, title: string, content: Safe): Safe {
  const other: Mode = ctx.mode === 'live' ? 'test' : 'live';
  return document(
    `${title} · Sendflow`,
    html`<a class="skip" href="#main">Skip to content</a>
<header class="mode-${ctx.mode}">
  <span class="brand">Sendflow</span>
  <span>Account <span class="mono">${ctx.accountId}</span> · <span class="badge">${ctx.mode === 'live' ? 'Live' : 'Test'} mode</span></span>
  ${postForm('/mode', html`<input type="hidden" name="mode" value="${other}"><button type="submit" class="secondary">Switch to ${other} mode</button>`, ctx.csrf, 'inline')}
  ${postForm('/sign-out', html`<button type="submit" class="secondary">Sign out</button>`, ctx.csrf, 'inline')}
  <nav aria-label="Dashboard"><ul>${NAV.map(
    ([path, label]) =>
      html`<li><a href="${BASE}${path}"${path === section ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )}<li><a href="${API_REFERENCE}">API reference</a></li></ul></nav>
</header>
<main id="main" tabindex="-1">
${flashMessage(ctx.flash)}
<h1>${title}</h1>
${content}
</main>`,
  );
}

/** A page outside a session (sign-in, signed out): no navigation, no account data. */
export function bare(title: string, content: Safe): Safe {
  return document(`${title} · Sendflow`, html`<main id="main"><h1>${title}</h1>${content}</main>`);
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
  return html`${text.split(/`([^`]*)`/).map((part, i) => (i % 2 ? html`<code>${part}</code>` : part))}`;
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
  return html`<label for="${id}">${label}</label><input id="${id}" name="${name}" type="${type}"${attrs}${invalidAttrs(ctx, name, id)}>${fieldError(ctx, name, id)}`;
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
export function dangerLink(path: string, label: string): Safe {
  return html`<a class="button danger" href="${BASE}${path}">${label}</a>`;
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
