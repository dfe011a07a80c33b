// The dashboard's small building blocks, used by every page so a fix is made once: status badges (colour and
// text), tokens that wrap only at their boundaries (URLs, host names, addresses), compact times, and the data
// table that becomes a list of cards on a phone.
import { html, type Safe } from './http';

export type Tone = 'ok' | 'bad' | 'warn' | 'info' | 'neutral';

/** A badge: its text says the state, its colour (and a shape beside the text) repeats it. */
export function badge(text: string, tone: Tone = 'neutral', extraClass = ''): Safe {
  return html`<span class="badge tone-${tone}${extraClass ? ` ${extraClass}` : ''}">${text}</span>`;
}

const TONES: Readonly<Record<string, Tone>> = {
  succeeded: 'ok',
  delivered: 'ok',
  verified: 'ok',
  published: 'ok',
  completed: 'ok',
  subscribed: 'ok',
  received: 'ok',
  sent: 'ok',
  opened: 'ok',
  clicked: 'ok',
  healthy: 'ok',
  active: 'ok',
  failed: 'bad',
  failure: 'bad',
  bounced: 'bad',
  complained: 'bad',
  rejected: 'bad',
  suppressed: 'bad',
  failing: 'bad',
  disabled: 'bad',
  revoked: 'bad',
  temporary_failure: 'warn',
  delivery_delayed: 'warn',
  pending: 'warn',
  partial: 'warn',
  running: 'info',
  queued: 'info',
  scheduled: 'info',
  draft: 'info',
  not_started: 'info',
  canceled: 'neutral',
  unsubscribed: 'neutral',
};

/** The tone a status word takes: succeeded → ok, failed → bad, pending → warn, anything unknown: neutral. */
export const statusTone = (status: string): Tone => TONES[status] ?? 'neutral';

/** A status as a badge: its word (underscores as spaces) and its tone. */
export function statusBadge(status: string): Safe {
  return badge(status.replaceAll('_', ' '), statusTone(status), `status-${status}`);
}

/** A URL (with a scheme), a dotted host name, or an address: a token that may wrap only at its boundaries. */
const TOKEN =
  /^(?:[a-z][a-z0-9+.-]*:\/\/\S+|[^\s@]*@[^\s@]+|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.[A-Za-z][A-Za-z0-9-]+\.?)$/i;
/** Where a token may wrap: after its scheme's `://`, after . / : ? & = @ (never inside a label or a port). */
const BOUNDARY = /(:\/\/|[./:?&=@])/;

/**
 * Text whose URLs, host names and addresses wrap only at a boundary: a <wbr> after each one (the styles forbid
 * breaking anywhere else: `overflow-wrap: break-word` breaks inside a piece only when that piece alone is wider
 * than its line). Other words are left as they are.
 */
export function tokens(text: string): Safe {
  const parts = text.split(/(\s+)/);
  return html`${parts.map(tokenPart)}`;
}

/** Brackets, quotes and sentence punctuation around a token (`(https://…)`, `<a@b.example>,`): kept whole. */
const WRAPPED = /^([("'<[]*)(.*?)([)"'>\].,;:!?]*)$/;

function tokenPart(part: string): Safe | string {
  if (TOKEN.test(part)) return breakable(part);
  const [, before = '', token = '', after = ''] = WRAPPED.exec(part) ?? [];
  return (before || after) && TOKEN.test(token) ? html`${before}${breakable(token)}${after}` : part;
}

function breakable(token: string): Safe {
  const pieces = token.split(BOUNDARY);
  const out: (Safe | string)[] = [];
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i] ?? '';
    out.push(piece);
    // After a boundary (odd indexes), unless it ends the token.
    if (i % 2 === 1 && i < pieces.length - 1 && pieces.slice(i + 1).join('')) out.push(html`<wbr>`);
  }
  return html`${out}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "Dec 7, 21:04:05 UTC" (the year too when it is not `now`'s): one line in a table, to the second. */
export function compactTime(iso: string, now = Date.now()): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const year = at.getUTCFullYear() === new Date(now).getUTCFullYear() ? '' : ` ${at.getUTCFullYear()}`;
  return `${MONTHS[at.getUTCMonth()]} ${at.getUTCDate()}${year}, ${at.toISOString().slice(11, 19)} UTC`;
}

/** A time for tables and lists: compact, on one line, the exact instant in its `datetime`. */
export function at(iso: unknown): Safe | string {
  if (typeof iso !== 'string' || !iso) return '—';
  return html`<time class="when" datetime="${iso}">${compactTime(iso)}</time>`;
}

type Cell = Safe | string | number | null | undefined;

export interface TableOptions {
  /** The caption is for screen readers only (the section's heading already says it). */
  readonly hiddenCaption?: boolean;
  /** Each row's first cell names it (a th scope="row"). */
  readonly rowHeaders?: boolean;
  /** Per column: a class for its cells (`url`, `mono`, `token`). */
  readonly classes?: readonly (string | undefined)[];
}

/**
 * A table of rows in its own scroll frame (wide content scrolls there, never the page). Below 40rem each row
 * becomes a card: every cell on its own line under its column's name (data-label), so the status column is
 * never off-screen.
 */
export function dataTable(
  caption: string,
  columns: readonly string[],
  rows: readonly (readonly Cell[])[],
  options: TableOptions = {},
): Safe {
  const cellClass = (i: number) => {
    const name = options.classes?.[i];
    return name ? html` class="${name}"` : '';
  };
  return html`<div class="table-wrap" tabindex="0"><table class="data"><caption${options.hiddenCaption ? html` class="visually-hidden"` : ''}>${caption}</caption>
<thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
<tbody>${rows.map(
    (row) =>
      html`<tr>${row.map((cell, i) =>
        i === 0 && options.rowHeaders
          ? html`<th scope="row" data-label="${columns[i] ?? ''}"${cellClass(i)}>${cell ?? ''}</th>`
          : html`<td data-label="${columns[i] ?? ''}"${cellClass(i)}>${cell ?? ''}</td>`,
      )}</tr>`,
  )}</tbody></table></div>`;
}
