// Template syntax (docs/templates.md, "Syntax"): Resend's, logic-less. `{{{KEY}}}` is a variable and
// `{{{KEY|fallback}}}` one with an inline fallback; everything else is text. Parsing and rendering are one forward
// pass each (no regex over the whole text, no backtracking, no recursion), and nothing in a template is ever
// evaluated: a variable is a key looked up in a Map of the values the send gave, so a template can name no code,
// no property of an object and no other template. Mustache's own tags (`{{NAME}}`, `{{#section}}`, `{{> partial}}`,
// `{{=<% %>=}}`) are refused with a hint rather than sent as literal text: they mean their author expected logic
// this renderer does not have.

/** What a template may hold; `renderTemplate` stops at its budget. */
export const SYNTAX_LIMITS = {
  /** A variable's key: ASCII letters, digits and `_` (Resend's rule). */
  key: 50,
  /** An inline fallback's characters (`{{{KEY|fallback}}}`): a word or two, not a document. */
  inlineFallback: 200,
  /** Tags (variable references) in one field: far more than any email needs. */
  tags: 2_000,
} as const;

export const KEY_PATTERN = /^[A-Za-z0-9_]{1,50}$/;

export type Segment =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'var'; readonly key: string; readonly fallback?: string };

export interface ParsedTemplate {
  readonly segments: readonly Segment[];
  /** Every key the template references, once each, in order of first use. */
  readonly keys: readonly string[];
  /** Keys referenced at least once without an inline fallback. */
  readonly keysWithoutInlineFallback: ReadonlySet<string>;
}

export type ParseResult =
  | { readonly ok: true; readonly parsed: ParsedTemplate }
  | { readonly ok: false; readonly problem: string };

const OPEN = '{{';
const TRIPLE_OPEN = '{{{';
const TRIPLE_CLOSE = '}}}';
/** The longest tag body: spaces, a key, `|` and a fallback. */
const MAX_TAG_BODY = SYNTAX_LIMITS.key + SYNTAX_LIMITS.inlineFallback + 16;
/** A tag body: optional spaces, the key, optionally `|` and a fallback without braces. Bounded and anchored. */
const TAG_BODY = /^ *([A-Za-z0-9_]{1,50}) *(?:\|([^{}]{0,200}))?$/;
/** What follows `{{` in a mustache tag: a key character or one of mustache's sigils. */
const MUSTACHE_TAG = /^ *[A-Za-z0-9_#^/>!=&.]/;

/** Line and column (1-based) of `index` in `source`. */
export function position(source: string, index: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); i !== -1 && i < index; i = source.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return `line ${line}, column ${index - lineStart + 1}`;
}

/** One forward pass over `source`: its text and variables, or the first problem (with its line and column). */
export function parseTemplate(source: string): ParseResult {
  const segments: Segment[] = [];
  const keys = new Set<string>();
  const bare = new Set<string>();
  let textStart = 0;
  let from = 0;
  let tags = 0;
  for (let at = source.indexOf(OPEN, from); at !== -1; at = source.indexOf(OPEN, from)) {
    if (!source.startsWith(TRIPLE_OPEN, at)) {
      const after = source.slice(at + 2, at + 3 + SYNTAX_LIMITS.key);
      if (MUSTACHE_TAG.test(after)) {
        return {
          ok: false,
          problem:
            `${position(source, at)}: "{{" starts a mustache tag, which templates do not have: a variable is ` +
            '{{{KEY}}} (three braces, as in Resend), and there are no sections, partials or other logic.',
        };
      }
      from = at + 2;
      continue;
    }
    // The closest `}}}` within the longest possible tag: bounded work per tag, never a scan to the end.
    const window = source.slice(at + 3, at + 3 + MAX_TAG_BODY + TRIPLE_CLOSE.length);
    const close = window.indexOf(TRIPLE_CLOSE);
    const body = close === -1 ? null : TAG_BODY.exec(window.slice(0, close));
    if (!body) {
      return {
        ok: false,
        problem:
          `${position(source, at)}: "{{{" does not start a variable. Write {{{KEY}}} or {{{KEY|fallback}}}: KEY is 1 to ` +
          `${SYNTAX_LIMITS.key} letters, digits or underscores; a fallback is at most ${SYNTAX_LIMITS.inlineFallback} ` +
          'characters without braces.',
      };
    }
    tags += 1;
    if (tags > SYNTAX_LIMITS.tags) {
      return { ok: false, problem: `More than ${SYNTAX_LIMITS.tags} variables in one field.` };
    }
    if (at > textStart) segments.push({ kind: 'text', text: source.slice(textStart, at) });
    const key = body[1] as string;
    const fallback = body[2]?.trim();
    segments.push(fallback === undefined ? { kind: 'var', key } : { kind: 'var', key, fallback });
    keys.add(key);
    if (fallback === undefined) bare.add(key);
    from = at + 3 + close + TRIPLE_CLOSE.length;
    textStart = from;
  }
  if (textStart < source.length) segments.push({ kind: 'text', text: source.slice(textStart) });
  return { ok: true, parsed: { segments, keys: [...keys], keysWithoutInlineFallback: bare } };
}

/** A value to put in place of a variable, and whether it goes in as is (never escaped). */
export interface RenderValue {
  readonly text: string;
  readonly unescaped?: boolean;
}

/** The output would pass its budget: rendering stopped there, nothing of it is kept. */
export class RenderBudgetExceeded extends Error {
  override readonly name = 'RenderBudgetExceeded';
}

/** UTF-8 bytes a render may still produce; shared by every field and email of a request. */
export interface RenderBudget {
  remaining: number;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe inside HTML elements and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] as string);
}

/**
 * The template with each variable replaced: by its value (HTML-escaped when `escape`, unless the value is
 * declared unescaped), else by its inline fallback (template text, as written). A variable with neither is a bug
 * of the caller (resolution checks first): it throws. Throws RenderBudgetExceeded as soon as the output passes
 * the budget, which it then leaves spent. Work is linear in the template and the output, and the output is bounded.
 */
export function renderTemplate(
  parsed: ParsedTemplate,
  values: ReadonlyMap<string, RenderValue>,
  options: { readonly escape: boolean; readonly budget: RenderBudget },
): string {
  const out: string[] = [];
  for (const segment of parsed.segments) {
    let piece: string;
    if (segment.kind === 'text') piece = segment.text;
    else {
      const value = values.get(segment.key);
      if (value) piece = options.escape && !value.unescaped ? escapeHtml(value.text) : value.text;
      else if (segment.fallback !== undefined) piece = segment.fallback;
      else throw new Error(`No value for template variable ${segment.key}`);
    }
    options.budget.remaining -= Buffer.byteLength(piece, 'utf8');
    if (options.budget.remaining < 0) throw new RenderBudgetExceeded('The rendered output is too large.');
    out.push(piece);
  }
  return out.join('');
}
