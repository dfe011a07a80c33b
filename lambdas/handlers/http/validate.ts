// zod at the HTTP boundary: a failed parse becomes a 422 whose `message` is the first problem in plain words with
// the field's path, and whose `details` list every problem (domain/field-problems.ts). zod's own wording never
// reaches a caller: a schema's own message is kept, and every problem zod would word itself is worded here.
import type * as z from 'zod';
import { type FieldPath, invalidRequest, problem, unknownField, type Where } from '../../domain/field-problems';

/**
 * What zod's parse context gives an issue the schema did not word itself: such an issue is worded below from its
 * code, so zod's default English ("Invalid input: expected string, received undefined") is never used.
 */
const UNWORDED = '\u0000unworded';

/**
 * `fieldNames`: Resend's name for a 422 whose every problem is about one field (e.g. permission →
 * invalid_access), beside the defaults below.
 */
export function validate<T extends z.ZodType>(
  schema: T,
  input: unknown,
  where: Where = 'body',
  fieldNames: Readonly<Record<string, string>> = {},
): z.infer<T> {
  const result = schema.safeParse(input, { error: () => UNWORDED });
  if (result.success) return result.data;
  const issues = (result.error.issues as readonly Issue[]).flatMap(explained);
  const details = issues.flatMap((issue) => describe(issue, schema, input, where));
  // An unknown field that is a near miss of a known one usually explains the rest (`Subject` → `subject` is
  // required): it comes first.
  const ranked = details
    .map((detail, index) => ({ detail, first: /^Unknown .*did you mean/.test(detail.message) ? 0 : 1, index }))
    .sort((a, b) => a.first - b.first || a.index - b.index)
    .map((entry) => entry.detail);
  const name = resendName(issues, input, { from: 'invalid_from_address', ...fieldNames });
  throw invalidRequest(ranked, name);
}

interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly code?: string;
  readonly errors?: readonly (readonly Issue[])[];
  readonly expected?: string;
  readonly origin?: string;
  readonly minimum?: number | bigint;
  readonly maximum?: number | bigint;
  readonly inclusive?: boolean;
  readonly exact?: boolean;
  readonly format?: string;
  readonly pattern?: string;
  readonly prefix?: string;
  readonly suffix?: string;
  readonly includes?: string;
  readonly values?: readonly unknown[];
  readonly keys?: readonly string[];
  readonly divisor?: number | bigint;
}

/** The details one issue makes: one per unknown key, else one. */
function describe(issue: Issue, schema: z.ZodType, input: unknown, where: Where) {
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
    const known = fieldsAt(schema, issue.path);
    return issue.keys.map((key) => unknownField([...issue.path, key], known, where));
  }
  const text = issue.message === UNWORDED ? worded(issue, input) : issue.message;
  return [problem(issue.path, text, where)];
}

/** The plain words for an issue zod would otherwise word itself: a predicate that follows the field's name. */
function worded(issue: Issue, input: unknown): string {
  const value = at(input, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return 'is required.';
      return `must be ${typeName(issue.expected)}, not ${valueName(value)}.`;
    case 'too_small':
      return sizeWords(issue, 'small');
    case 'too_big':
      return sizeWords(issue, 'big');
    case 'invalid_format':
      return formatWords(issue);
    case 'invalid_value': {
      const values = (issue.values ?? []).map((v) => JSON.stringify(v));
      if (values.length === 1) return `must be ${values[0]}.`;
      return `must be one of ${values.slice(0, 20).join(', ')}${values.length > 20 ? ', …' : ''}.`;
    }
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}.`;
    case 'invalid_union':
      return unionWords(issue);
    case 'invalid_key':
      return 'has a key that is not allowed here.';
    case 'invalid_element':
      return 'has an entry that is not allowed here.';
    default:
      return 'is not valid here.';
  }
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  tuple: 'a list',
  object: 'an object',
  record: 'an object',
  map: 'an object',
  null: 'null',
  date: 'a date',
  literal: 'a fixed value',
  nan: 'NaN',
};

const typeName = (expected: string | undefined) => TYPE_NAMES[expected ?? ''] ?? 'something else';

/** What was sent instead, in a few words: `a list`, `null`, `"abc"` (a short string is quoted). */
function valueName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return value.length <= 40 ? `the string ${JSON.stringify(value)}` : 'a string';
  if (typeof value === 'number') return Number.isFinite(value) ? `the number ${value}` : 'a number out of range';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function sizeWords(issue: Issue, side: 'small' | 'big'): string {
  const bound = side === 'small' ? issue.minimum : issue.maximum;
  const n = String(bound);
  const exact = issue.exact;
  const atLeast = side === 'small' ? 'at least' : 'at most';
  switch (issue.origin) {
    case 'string':
      if (side === 'small' && String(bound) === '1') return 'must not be empty.';
      return `must be ${exact ? 'exactly' : atLeast} ${n} ${n === '1' ? 'character' : 'characters'} long.`;
    case 'array':
    case 'set':
      if (side === 'small' && String(bound) === '1') return 'must not be an empty list.';
      return `must list ${exact ? 'exactly' : atLeast} ${n} ${n === '1' ? 'item' : 'items'}.`;
    case 'file':
      return `must be ${atLeast} ${n} bytes.`;
    default: {
      const strict = issue.inclusive === false;
      if (side === 'small') return `must be ${strict ? 'more than' : 'at least'} ${n}.`;
      return `must be ${strict ? 'less than' : 'at most'} ${n}.`;
    }
  }
}

const FORMAT_NAMES: Readonly<Record<string, string>> = {
  email: 'an email address',
  url: 'a URL, e.g. https://example.com/path',
  uuid: 'a UUID',
  datetime: 'an ISO 8601 date-time with a time zone, e.g. 2026-12-01T09:00:00Z',
  date: 'a date such as 2026-12-01',
  time: 'a time such as 09:30:00',
  duration: 'an ISO 8601 duration such as PT5M',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  base64: 'base64',
  base64url: 'base64url',
  jwt: 'a JSON Web Token',
};

function formatWords(issue: Issue): string {
  switch (issue.format) {
    case 'starts_with':
      return `must start with ${JSON.stringify(issue.prefix)}.`;
    case 'ends_with':
      return `must end with ${JSON.stringify(issue.suffix)}.`;
    case 'includes':
      return `must contain ${JSON.stringify(issue.includes)}.`;
    case 'regex':
      return `is not in the form this field takes (${issue.pattern}).`;
    default:
      return `must be ${FORMAT_NAMES[issue.format ?? ''] ?? `in ${issue.format} form`}.`;
  }
}

/** A union nothing matched: the kinds of value its branches take, when each branch failed on the kind. */
function unionWords(issue: Issue): string {
  const kinds = (issue.errors ?? []).map((branch) => {
    const root = branch.find((i) => i.path.length === 0 && i.code === 'invalid_type');
    return root ? typeName(root.expected) : undefined;
  });
  if (kinds.length && kinds.every((k) => k !== undefined)) {
    const unique = [...new Set(kinds)];
    return `must be ${unique.slice(0, -1).join(', ')}${unique.length > 1 ? ' or ' : ''}${unique[unique.length - 1]}.`;
  }
  return 'is not in any form this field takes.';
}

/**
 * Resend's more precise names for a 422 (research/email.md §3.4): every problem at a field that is absent →
 * missing_required_field; every problem about one named field (`from` → invalid_from_address, or the caller's
 * `fieldNames`) → that name; else the code's validation_error.
 */
function resendName(
  issues: readonly Issue[],
  input: unknown,
  fieldNames: Readonly<Record<string, string>>,
): string | undefined {
  if (issues.length === 0) return undefined;
  if (issues.every((issue) => issue.path.length > 0 && at(input, issue.path) === undefined))
    return 'missing_required_field';
  const field = issues[0]?.path[0];
  if (typeof field === 'string' && Object.hasOwn(fieldNames, field) && issues.every((i) => i.path[0] === field))
    return fieldNames[field];
  return undefined;
}

/** The value at `path` in `input`, or undefined when any step is missing. */
function at(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const step of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Object.hasOwn(value, step) ? (value as Record<PropertyKey, unknown>)[step] : undefined;
  }
  return value;
}

/**
 * A union that failed says only that nothing matched. When every branch but one failed on the value's type (`to`
 * is a string, so the list branch is moot), that one branch's own problems are the explanation: report those.
 */
function explained(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union' || !issue.errors) return [issue];
  const relevant = issue.errors.filter(
    (branch) => !branch.every((i) => i.code === 'invalid_type' && i.path.length === 0),
  );
  const only = relevant.length === 1 ? relevant[0] : undefined;
  if (!only) return [issue];
  return only.flatMap((inner) => explained({ ...inner, path: [...issue.path, ...inner.path] }));
}

/** zod's definition of a schema, as far as finding the fields of an object goes. */
interface Def {
  readonly type?: string;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly element?: z.ZodType;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly left?: z.ZodType;
  readonly right?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly items?: readonly z.ZodType[];
  readonly getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The field names an object schema at `path` knows (an unknown one gets a suggestion from these). */
export function fieldsAt(schema: z.ZodType, path: FieldPath): string[] {
  const found = new Set<string>();
  walk(schema, path, 0, found, 0);
  return [...found];
}

function walk(schema: z.ZodType, path: FieldPath, step: number, found: Set<string>, depth: number): void {
  if (depth > 64) return;
  const def = defOf(schema);
  const next = (inner: z.ZodType | undefined, advance = 0) => {
    if (inner) walk(inner, path, step + advance, found, depth + 1);
  };
  switch (def.type) {
    case 'object':
      if (step === path.length) for (const key of Object.keys(def.shape ?? {})) found.add(key);
      else next(def.shape?.[String(path[step])], 1);
      return;
    case 'array':
      if (step < path.length) next(def.element, 1);
      return;
    case 'tuple':
      if (step < path.length) next(def.items?.[Number(path[step])], 1);
      return;
    case 'record':
      if (step < path.length) next(def.valueType, 1);
      return;
    case 'union':
      for (const option of def.options ?? []) next(option);
      return;
    case 'intersection':
      next(def.left);
      next(def.right);
      return;
    case 'pipe':
      next(def.in);
      return;
    case 'lazy':
      next(def.getter?.());
      return;
    default:
      next(def.innerType);
  }
}
