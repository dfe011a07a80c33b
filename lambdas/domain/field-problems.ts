// How a 422 says what is wrong (DESIGN §7): each problem is one plain sentence that names its field the way a
// caller writes it (`to[1]`, `[2].headers.X-Campaign`), the error's `message` is the first of them, and `details`
// keeps every one, each with its `path` (dot-joined, `to.1`). Pure: the HTTP validator and the use cases that
// find a problem later (a domain_id that does not exist, a recovery window) both build their 422s here.
import { type ErrorDetail, ValidationError } from './errors';

export type FieldPath = readonly PropertyKey[];

/** What the problems are about when the path is empty: the request's body, its query string, or a form. */
export type Where = 'body' | 'query' | 'form';

const SUBJECT: Readonly<Record<Where, string>> = {
  body: 'The request body',
  query: 'The query string',
  form: 'The form',
};

/** A path as a caller writes it: `to[1]`, `[0].subject`, `headers.X-Campaign`, `headers["a b"]`. */
export function displayPath(path: FieldPath): string {
  let out = '';
  for (const step of path) {
    if (typeof step === 'number') out += `[${step}]`;
    else if (typeof step === 'string' && /^[A-Za-z0-9_-]+$/.test(step)) out += out ? `.${step}` : step;
    else out += `[${JSON.stringify(String(step))}]`;
  }
  return out;
}

/** The `path` of a detail: dot-joined (`to.1`), or the `where` itself for the request as a whole. */
export const detailPath = (path: FieldPath, where: Where = 'body') =>
  path.length ? path.map(String).join('.') : where;

/**
 * One problem as a sentence that names its field. `text` is either a predicate, starting in lower case ("is
 * required", "must be at most 100 characters long"), which follows the field's name, or a sentence of its own
 * ("Give html or text."), which follows the name and a colon.
 */
export function sentence(path: FieldPath, text: string, where: Where = 'body'): string {
  const predicate = /^[a-z]/.test(text);
  if (!path.length) return predicate ? `${SUBJECT[where]} ${text}` : text;
  const name = `\`${displayPath(path)}\``;
  return predicate ? `${name} ${text}` : `${name}: ${text}`;
}

/** A detail: its dot-joined path and the sentence naming the field. */
export function problem(path: FieldPath, text: string, where: Where = 'body'): ErrorDetail {
  return { path: detailPath(path, where), message: sentence(path, text, where) };
}

/** The error's `message`: the first problem, and how many more `details` lists. */
export function summary(details: readonly ErrorDetail[]): string {
  const [first] = details;
  if (!first) return 'The request is invalid.';
  const more = details.length - 1;
  if (more === 0) return first.message;
  return `${first.message} (${more} more ${more === 1 ? 'problem' : 'problems'} in \`details\`.)`;
}

/** A 422 `validation_error` whose message is the first problem's sentence. */
export function invalidRequest(details: readonly ErrorDetail[], errorName?: string): ValidationError {
  return new ValidationError(summary(details), { details, ...(errorName ? { errorName } : {}) });
}

/**
 * The field a caller probably meant by an unknown one: the same once case and `_`/`-` are ignored (`replyTo`
 * → `reply_to`), else the closest within two edits (one for a name under five characters: `subjet` → `subject`); undefined when nothing is close.
 */
export function suggestField(unknown: string, known: readonly string[]): string | undefined {
  const squash = (s: string) => s.toLowerCase().replace(/[_-]/g, '');
  const same = known.find((k) => squash(k) === squash(unknown));
  if (same) return same;
  if (unknown.length > 64) return undefined;
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    // Short names are close to too much ("foo" is two edits from "from"): one edit below five characters.
    const limit = Math.min(unknown.length, key.length) < 5 ? 1 : 2;
    const distance = editDistance(squash(unknown), squash(key), limit);
    if (distance <= limit && (!best || distance < best.distance)) best = { key, distance };
  }
  return best?.key;
}

/** Levenshtein distance, giving up (returning limit + 1) once it must exceed `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length] ?? limit + 1;
}

/** "Unknown field `replyTo`: did you mean `reply_to`?", or the fields that are known there. */
export function unknownField(path: FieldPath, known: readonly string[], where: Where = 'body'): ErrorDetail {
  const name = String(path[path.length - 1] ?? '');
  const what = where === 'query' ? 'query parameter' : 'field';
  const suggestion = suggestField(name, known);
  const label = `\`${displayPath(path)}\``;
  const message = suggestion
    ? `Unknown ${what} ${label}: did you mean \`${suggestion}\`?`
    : known.length
      ? `Unknown ${what} ${label}. Known ${what === 'field' ? 'fields' : 'parameters'} here: ${known.map((k) => `\`${k}\``).join(', ')}.`
      : `Unknown ${what} ${label}: none is taken here.`;
  return { path: detailPath(path, where), message };
}
