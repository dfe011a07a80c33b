// Templates as Resend models them (docs/templates.md): a name, an optional alias, default `from`, `subject` and
// `reply_to`, an `html` and a `text` body, and typed variables (`string` or `number`) with optional fallbacks. A
// template has a draft and, once published, a published version; sends render the published one. The rules here
// are pure: what content may be stored, and which values a send gives each variable.
import { EMAIL_LIMITS } from '../email/limits';
import { KEY_PATTERN, type ParsedTemplate, parseTemplate, type RenderValue, SYNTAX_LIMITS } from './syntax';

export const TEMPLATE_LIMITS = {
  name: 256,
  /** An alias: letters, digits, `.`, `_`, `-`; it may not look like an id (`tpl_…`). */
  alias: 100,
  /** Variables declared per template (Resend's 50). */
  variables: 50,
  /** A string fallback_value's characters. */
  fallback: 1_000,
  /**
   * `html` and `text` together, UTF-8 bytes: what one email may store (EMAIL_LIMITS.storedBytes), so a version
   * and its variables stay within one DynamoDB item (400 KB) and a render of it can be stored.
   */
  contentBytes: EMAIL_LIMITS.storedBytes,
  /** Templates per account and mode: creating one more is 422 limit_exceeded. */
  perMode: 1_000,
} as const;

/** Resend's contact variables, which a template cannot declare (Resend refuses them too). */
export const RESERVED_KEYS = ['FIRST_NAME', 'LAST_NAME', 'EMAIL', 'UNSUBSCRIBE_URL', 'contact', 'this'] as const;

export const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const TEMPLATE_ID_PREFIX = 'tpl';
/** A reference is an id when it has the id prefix; anything else is looked up as an alias. */
export const isTemplateId = (ref: string) => ref.startsWith(`${TEMPLATE_ID_PREFIX}_`);

export const VARIABLE_TYPES = ['string', 'number'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

export interface TemplateVariable {
  readonly key: string;
  readonly type: VariableType;
  /** Used when a send gives no value; without it the variable is required. */
  readonly fallback?: string | number;
  /** Sendflow's extension: a `string` put into `html` as given (trusted markup), never HTML-escaped. */
  readonly unescaped?: true;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** One version of a template: what a send renders (the published one) or what is being edited (the draft). */
export interface TemplateContent {
  readonly subject?: string;
  readonly html: string;
  readonly text?: string;
  readonly from?: string;
  readonly replyTo: readonly string[];
  readonly variables: readonly TemplateVariable[];
}

export interface Problem {
  /** The field's path, e.g. `variables.2.fallback_value` or `html`. */
  readonly path: string;
  readonly message: string;
}

/** A version's templated fields, parsed: each of subject, html and text that it has. */
export interface ParsedContent {
  readonly subject?: ParsedTemplate;
  readonly html: ParsedTemplate;
  readonly text?: ParsedTemplate;
}

export type ParsedOrProblems =
  | { readonly ok: true; readonly parsed: ParsedContent }
  | { readonly ok: false; readonly problems: Problem[] };

/** The fields of `content` that hold template text, parsed; or each one's first problem. */
export function parseContent(content: Pick<TemplateContent, 'subject' | 'html' | 'text'>): ParsedOrProblems {
  const problems: Problem[] = [];
  const parse = (field: 'subject' | 'html' | 'text', source: string | undefined) => {
    if (source === undefined) return undefined;
    const result = parseTemplate(source);
    if (result.ok) return result.parsed;
    problems.push({ path: field, message: result.problem });
    return undefined;
  };
  const subject = parse('subject', content.subject);
  const html = parse('html', content.html);
  const text = parse('text', content.text);
  if (problems.length || !html) return { ok: false, problems };
  return { ok: true, parsed: { html, ...(subject ? { subject } : {}), ...(text ? { text } : {}) } };
}

/**
 * Everything wrong with a version before it is stored: its syntax, its size, and its variable declarations
 * (valid unique keys that are not reserved, a fallback of the variable's type, `unescaped` on strings only).
 */
export function contentProblems(content: TemplateContent): Problem[] {
  const problems: Problem[] = [];
  const parsed = parseContent(content);
  if (!parsed.ok) problems.push(...parsed.problems);
  const bytes = Buffer.byteLength(content.html, 'utf8') + Buffer.byteLength(content.text ?? '', 'utf8');
  if (bytes > TEMPLATE_LIMITS.contentBytes) {
    problems.push({
      path: 'html',
      message: `html and text are ${bytes} bytes together; at most ${TEMPLATE_LIMITS.contentBytes} (what one email may store).`,
    });
  }
  if (content.variables.length > TEMPLATE_LIMITS.variables) {
    problems.push({ path: 'variables', message: `At most ${TEMPLATE_LIMITS.variables} variables.` });
  }
  const seen = new Set<string>();
  for (const [i, variable] of content.variables.entries()) {
    const at = (field: string) => `variables.${i}.${field}`;
    if (!KEY_PATTERN.test(variable.key)) {
      problems.push({
        path: at('key'),
        message: `A key is 1 to ${SYNTAX_LIMITS.key} ASCII letters, digits or underscores, e.g. PRODUCT_NAME.`,
      });
    } else if ((RESERVED_KEYS as readonly string[]).includes(variable.key)) {
      problems.push({ path: at('key'), message: `${variable.key} is reserved (${RESERVED_KEYS.join(', ')}).` });
    } else if (seen.has(variable.key)) {
      problems.push({ path: at('key'), message: `${variable.key} is declared twice.` });
    }
    seen.add(variable.key);
    const fallback = variable.fallback;
    if (fallback !== undefined && typeof fallback !== variable.type) {
      problems.push({
        path: at('fallback_value'),
        message: `A ${variable.type} variable's fallback_value is a ${variable.type}.`,
      });
    } else if (typeof fallback === 'number' && !Number.isFinite(fallback)) {
      problems.push({ path: at('fallback_value'), message: 'A number fallback_value is finite.' });
    } else if (typeof fallback === 'string' && fallback.length > TEMPLATE_LIMITS.fallback) {
      problems.push({ path: at('fallback_value'), message: `At most ${TEMPLATE_LIMITS.fallback} characters.` });
    }
    if (variable.unescaped && variable.type !== 'string') {
      problems.push({ path: at('unescaped'), message: 'Only a string variable can be unescaped.' });
    }
  }
  return problems;
}

/**
 * The value of every variable a send renders: the value given (of the declared type; a variable the template
 * uses without declaring it is a string), else the declared fallback; a variable the template uses with no inline
 * fallback and none of these is missing. A value given for a key the template neither declares nor uses is
 * unknown. Problems name the key (`variables.KEY`); values come back only when there are none.
 */
export function resolveValues(
  content: Pick<TemplateContent, 'variables'>,
  parsed: ParsedContent,
  given: Readonly<Record<string, unknown>>,
): { readonly values: ReadonlyMap<string, RenderValue>; readonly problems: readonly Problem[] } {
  const declared = new Map(content.variables.map((variable) => [variable.key, variable]));
  const fields = [parsed.subject, parsed.html, parsed.text].filter((p): p is ParsedTemplate => p !== undefined);
  const used = new Set(fields.flatMap((field) => field.keys));
  // Used somewhere without an inline fallback, or declared without a fallback_value and not used at all (Resend
  // requires a value for every variable without one).
  const needed = new Set(fields.flatMap((field) => [...field.keysWithoutInlineFallback]));
  for (const variable of content.variables) if (!used.has(variable.key)) needed.add(variable.key);
  const values = new Map<string, RenderValue>();
  const problems: Problem[] = [];
  for (const [key, value] of Object.entries(given)) {
    const variable = declared.get(key);
    if (!variable && !used.has(key)) {
      const known = [...new Set([...declared.keys(), ...used])];
      problems.push({
        path: `variables.${key}`,
        message: `${key} is not a variable of this template (${known.length ? `its variables: ${known.join(', ')}` : 'it has none'}).`,
      });
      continue;
    }
    const type = variable?.type ?? 'string';
    if (typeof value !== type || (typeof value === 'number' && !Number.isFinite(value))) {
      problems.push({ path: `variables.${key}`, message: `${key} is a ${type} variable: give a ${type}.` });
      continue;
    }
    values.set(key, { text: String(value), ...(variable?.unescaped ? { unescaped: true } : {}) });
  }
  for (const variable of content.variables) {
    if (values.has(variable.key) || Object.hasOwn(given, variable.key) || variable.fallback === undefined) continue;
    values.set(variable.key, {
      text: String(variable.fallback),
      ...(variable.unescaped ? { unescaped: true } : {}),
    });
  }
  for (const key of needed) {
    if (values.has(key) || Object.hasOwn(given, key)) continue;
    problems.push({
      path: `variables.${key}`,
      message: `${key} is required: the template declares no fallback_value for it.`,
    });
  }
  return { values: problems.length ? new Map() : values, problems };
}
