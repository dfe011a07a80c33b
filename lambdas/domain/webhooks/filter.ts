// Payload filters (docs/webhooks.md, "Filters"): a JSON document a webhook's events must match to be delivered,
// in Hookdeck Outpost's syntax (its destination filters: exact values, `$eq $neq $gt $gte $lt $lte $in $nin
// $startsWith $endsWith $exist`, `$and $or $not`, nested fields, arrays that contain). Pure: what a filter may be
// (filterProblems, bounded in size and depth), whether an event matches and, when not, which clause failed
// (evaluateFilter). The matcher never throws: whatever it is given, it answers.
import { type SendflowEvent, standardBody } from '../events';

/** The bounds of a stored filter: its JSON text in bytes, and how deep objects and arrays nest in it. */
export const FILTER_LIMITS = { bytes: 4096, depth: 8 } as const;

/**
 * The fields a filter sees at its top level: a `standard` payload's (whatever the webhook's format) and the email's
 * `tags` as an object (`{"plan": "pro"}`), which the payload does not carry.
 */
export const EVENT_FIELDS = ['id', 'type', 'email_id', 'to', 'timestamp', 'created_at', 'sequence', 'data', 'tags'];

const COMPARISONS = ['$eq', '$neq', '$gt', '$gte', '$lt', '$lte'] as const;
const MEMBERSHIPS = ['$in', '$nin'] as const;
const AFFIXES = ['$startsWith', '$endsWith'] as const;
/** Outpost spells it `$exist`; `$exists` (MongoDB's spelling) is taken as the same. */
const EXISTENCE = ['$exist', '$exists'] as const;
const LOGICAL = ['$and', '$or', '$not'] as const;
export const FILTER_OPERATORS: readonly string[] = [
  ...COMPARISONS,
  ...MEMBERSHIPS,
  ...AFFIXES,
  ...EXISTENCE,
  ...LOGICAL,
];

/** A filter as stored: a JSON object (`{}` is no filter). */
export type WebhookFilter = Readonly<Record<string, unknown>>;

export interface FilterProblem {
  /** Where in the filter, as keys and indexes from its top. */
  readonly path: readonly (string | number)[];
  /** A predicate ("must be …") or a sentence of its own, as field-problems.ts words them. */
  readonly message: string;
}

export interface FilterVerdict {
  readonly matches: boolean;
  /** Which clause failed and why, for a person; null when it matches. */
  readonly reason: string | null;
  /** True when the filter holds something the matcher cannot evaluate (a filter filterProblems refuses). */
  readonly unevaluable?: true;
}

/** An event as every filter sees it: its `standard` body (whatever the webhook's format), and its `tags` if any. */
export function filterInput(event: SendflowEvent): Record<string, unknown> {
  return { ...standardBody(event), ...(event.tags ? { tags: event.tags } : {}) };
}

/** An empty filter, or none, lets every event through. */
export const isEmptyFilter = (filter: WebhookFilter | null | undefined): boolean =>
  !filter || Object.keys(filter).length === 0;

// ---------- validation ----------

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPrimitive = (v: unknown): v is null | boolean | number | string =>
  v === null || typeof v === 'boolean' || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
const isOperator = (key: string) => key.startsWith('$');
const known = (key: string) => FILTER_OPERATORS.includes(key);

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (isObject(value)) return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/**
 * What is wrong with a filter, every problem with its path; none when the matcher can evaluate it on any event.
 * A filter is an object whose top-level fields are EVENT_FIELDS (or `$and`/`$or`/`$not` of such objects), at most
 * FILTER_LIMITS.bytes of JSON and FILTER_LIMITS.depth levels deep; every `$` key is an operator with an operand of
 * its kind.
 */
export function filterProblems(filter: unknown): FilterProblem[] {
  if (!isObject(filter)) return [{ path: [], message: 'must be a JSON object (or null to remove the filter).' }];
  const text = JSON.stringify(filter);
  const bytes = Buffer.byteLength(text ?? '');
  if (bytes > FILTER_LIMITS.bytes)
    return [{ path: [], message: `must be at most ${FILTER_LIMITS.bytes} bytes of JSON; this one is ${bytes}.` }];
  const depth = depthOf(filter);
  if (depth > FILTER_LIMITS.depth)
    return [{ path: [], message: `must nest at most ${FILTER_LIMITS.depth} levels deep; this one nests ${depth}.` }];
  const problems: FilterProblem[] = [];
  checkTop(filter, [], problems);
  return problems.slice(0, 20);
}

/** The top level: an object of event fields and logical operators over such objects. */
function checkTop(node: Record<string, unknown>, path: (string | number)[], problems: FilterProblem[]): void {
  for (const [key, sub] of Object.entries(node)) {
    const at = [...path, key];
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(sub) || sub.length === 0) {
        problems.push({ path: at, message: 'must be a non-empty list of conditions.' });
        continue;
      }
      sub.forEach((item, i) => {
        if (isObject(item)) checkTop(item, [...at, i], problems);
        else problems.push({ path: [...at, i], message: 'must be an object of event fields at the top level.' });
      });
    } else if (key === '$not') {
      if (isObject(sub)) checkTop(sub, at, problems);
      else problems.push({ path: at, message: 'must be an object of event fields at the top level.' });
    } else if (isOperator(key)) {
      problems.push({
        path: at,
        message: known(key)
          ? `applies to a field: put it under one (e.g. {"type": {"${key}": …}}).`
          : `is not an operator. Operators: ${FILTER_OPERATORS.join(', ')}.`,
      });
    } else if (!EVENT_FIELDS.includes(key)) {
      problems.push({ path: at, message: `is not a field of an event. Fields: ${EVENT_FIELDS.join(', ')}.` });
    } else {
      checkCondition(sub, at, problems);
    }
  }
}

/** A condition on a value: a value to equal, a list to contain, or an object of fields and operators. */
function checkCondition(node: unknown, path: (string | number)[], problems: FilterProblem[]): void {
  if (isPrimitive(node)) return;
  if (typeof node === 'number') {
    problems.push({ path, message: 'must be a finite number.' });
    return;
  }
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) checkCondition(item, [...path, i], problems);
    return;
  }
  if (!isObject(node)) {
    problems.push({ path, message: 'must be a JSON value.' });
    return;
  }
  if (Object.keys(node).length === 0) {
    problems.push({ path, message: 'is an empty condition: give a field or an operator, or remove it.' });
    return;
  }
  for (const [key, operand] of Object.entries(node)) {
    const at = [...path, key];
    if (!isOperator(key)) checkCondition(operand, at, problems);
    else {
      const problem = operandProblem(key, operand);
      if (problem === 'recurse-list') {
        for (const [i, item] of (operand as unknown[]).entries()) checkCondition(item, [...at, i], problems);
      } else if (problem === 'recurse') checkCondition(operand, at, problems);
      else if (problem) problems.push({ path: at, message: problem });
    }
  }
}

/** What is wrong with an operator's operand; 'recurse' / 'recurse-list' when it holds conditions to check. */
function operandProblem(op: string, operand: unknown): string | 'recurse' | 'recurse-list' | null {
  switch (op) {
    case '$eq':
    case '$neq':
      return isJson(operand) ? null : 'must be a JSON value.';
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return typeof operand === 'string' || (typeof operand === 'number' && Number.isFinite(operand))
        ? null
        : 'must be a number or a string (strings compare in code point order, as ISO 8601 times do).';
    case '$in':
    case '$nin':
      if (Array.isArray(operand))
        return operand.every(isPrimitive) ? null : 'must list strings, numbers, booleans or null only.';
      return isPrimitive(operand) ? null : 'must be a list of values, or a string (a substring to find).';
    case '$startsWith':
    case '$endsWith':
      if (typeof operand === 'string') return null;
      return Array.isArray(operand) && operand.length > 0 && operand.every((s) => typeof s === 'string')
        ? null
        : 'must be a string or a non-empty list of strings.';
    case '$exist':
    case '$exists':
      return typeof operand === 'boolean' ? null : 'must be true or false.';
    case '$and':
    case '$or':
      return Array.isArray(operand) && operand.length > 0 ? 'recurse-list' : 'must be a non-empty list of conditions.';
    case '$not':
      return 'recurse';
    default:
      return `is not an operator. Operators: ${FILTER_OPERATORS.join(', ')}.`;
  }
}

function isJson(value: unknown): value is Json {
  if (isPrimitive(value)) return true;
  if (Array.isArray(value)) return value.every(isJson);
  return isObject(value) && Object.values(value).every(isJson);
}

// ---------- matching ----------

/** A field the event does not have (distinct from one that is null). */
const MISSING = Symbol('missing');
type Value = unknown | typeof MISSING;

/** The most steps one evaluation takes (each pairs a clause with a value): a bound on the cost of any event. */
export const MAX_FILTER_STEPS = 200_000;

class Unevaluable {
  constructor(readonly reason: string) {}
}
class OutOfSteps {}

interface Run {
  steps: number;
}

/** Why a clause failed: the event path it was about and a sentence. */
interface Failure {
  readonly where: string;
  readonly why: string;
}

/**
 * Whether `input` (an event as the filter sees it: filterInput, or an object given to the filter test) matches
 * `filter`, and when not, the first clause that failed. An empty filter matches everything. Never throws.
 */
export function evaluateFilter(filter: unknown, input: unknown): FilterVerdict {
  if (isObject(filter) && Object.keys(filter).length === 0) return { matches: true, reason: null };
  const run: Run = { steps: 0 };
  try {
    const failure = match(input, filter, '', run);
    if (!failure) return { matches: true, reason: null };
    return { matches: false, reason: failure.where ? `\`${failure.where}\` ${failure.why}` : failure.why };
  } catch (error) {
    if (error instanceof Unevaluable) return { matches: false, reason: error.reason, unevaluable: true };
    if (error instanceof OutOfSteps)
      return { matches: false, reason: `the filter took more than ${MAX_FILTER_STEPS} steps on this event.` };
    // A stack overflow on an absurdly deep input is the only other way out: it matches nothing.
    return { matches: false, reason: 'the filter could not be evaluated on this event.', unevaluable: true };
  }
}

const join = (where: string, key: string) =>
  /^[A-Za-z0-9_-]+$/.test(key) ? (where ? `${where}.${key}` : key) : `${where}[${JSON.stringify(key)}]`;

function show(value: Value): string {
  if (value === MISSING) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** null when `value` (at `where`) satisfies `clause`; else why not. */
function match(value: Value, clause: unknown, where: string, run: Run): Failure | null {
  run.steps += 1;
  if (run.steps > MAX_FILTER_STEPS) throw new OutOfSteps();
  if (isPrimitive(clause)) return equalsOrContains(value, clause, where);
  if (Array.isArray(clause)) return containsAll(value, clause, where, run);
  if (!isObject(clause)) throw new Unevaluable(`\`${where}\`: the condition is not a JSON value.`);
  const fields: [string, unknown][] = [];
  for (const [key, operand] of Object.entries(clause)) {
    if (isOperator(key)) {
      const failure = operator(key, value, operand, where, run);
      if (failure) return failure;
    } else fields.push([key, operand]);
  }
  if (fields.length === 0) return null;
  // A list's elements are tried in turn: one must have every field (Outpost's `{"items": {"sku": "x"}}`).
  if (Array.isArray(value)) {
    let first: Failure | null = null;
    for (const element of value) {
      const failure = matchFields(element, fields, where, run);
      if (!failure) return null;
      first ??= failure;
    }
    return value.length ? { where, why: `has no element that matches (the first: ${first?.why})` } : notIn(where);
  }
  return matchFields(value, fields, where, run);
}

const notIn = (where: string): Failure => ({ where, why: 'is an empty list' });

function matchFields(value: Value, fields: readonly [string, unknown][], where: string, run: Run): Failure | null {
  for (const [key, operand] of fields) {
    // The fields of a missing value, or of one that is no object, are missing too.
    const child = isObject(value) && Object.hasOwn(value, key) ? value[key] : MISSING;
    const failure = match(child, operand, join(where, key), run);
    if (failure) return failure;
  }
  return null;
}

/** A plain value: equal to it, or (a list) containing it. */
function equalsOrContains(value: Value, expected: unknown, where: string): Failure | null {
  if (value === MISSING) return { where, why: `is missing (expected ${show(expected)})` };
  if (Array.isArray(value)) {
    return value.some((element) => containsDeep(element, expected))
      ? null
      : { where, why: `is ${show(value)}, which does not contain ${show(expected)}` };
  }
  return samePrimitive(value, expected) ? null : { where, why: `is ${show(value)}, not ${show(expected)}` };
}

/** Nested lists are searched too (Outpost's arrays match when any element does). */
function containsDeep(element: unknown, expected: unknown): boolean {
  return Array.isArray(element) ? element.some((e) => containsDeep(e, expected)) : samePrimitive(element, expected);
}

/** A list clause: the value is a list holding, for each item of the clause, an element that satisfies it. */
function containsAll(value: Value, clause: readonly unknown[], where: string, run: Run): Failure | null {
  if (!Array.isArray(value)) return { where, why: `is ${show(value)}, not a list` };
  for (const item of clause) {
    if (!value.some((element) => match(element, item, where, run) === null))
      return { where, why: `is ${show(value)}, which has no element matching ${show(item)}` };
  }
  return null;
}

const samePrimitive = (a: unknown, b: unknown) => isPrimitive(a) && isPrimitive(b) && a === b;

/** Deep equality of JSON values: objects by their keys whatever the order. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (isPrimitive(a) || isPrimitive(b)) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
  );
}

/** Code point order (UTF-8 byte order, as Outpost's Go compares), not UTF-16 unit order. */
function compareStrings(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

const ORDER: Record<string, { test: (d: number) => boolean; words: string }> = {
  $gt: { test: (d) => d > 0, words: 'greater than' },
  $gte: { test: (d) => d >= 0, words: 'at least' },
  $lt: { test: (d) => d < 0, words: 'less than' },
  $lte: { test: (d) => d <= 0, words: 'at most' },
};

function operator(op: string, value: Value, operand: unknown, where: string, run: Run): Failure | null {
  const fail = (why: string): Failure => ({ where, why });
  const label = where ? `\`${where}\`` : 'the event';
  switch (op) {
    case '$and': {
      if (!Array.isArray(operand)) throw new Unevaluable(`${label}: $and must be a list.`);
      for (const item of operand) {
        const failure = match(value, item, where, run);
        if (failure) return failure;
      }
      return null;
    }
    case '$or': {
      if (!Array.isArray(operand)) throw new Unevaluable(`${label}: $or must be a list.`);
      let first: Failure | null = null;
      for (const item of operand) {
        const failure = match(value, item, where, run);
        if (!failure) return null;
        first ??= failure;
      }
      const because = first ? ` (the first: ${first.where ? `\`${first.where}\` ` : ''}${first.why})` : '';
      return fail(`matches none of the ${operand.length} conditions of $or${because}`);
    }
    case '$not':
      return match(value, operand, where, run) ? null : fail(`matches the condition under $not (${show(operand)})`);
    case '$exist':
    case '$exists': {
      if (typeof operand !== 'boolean') throw new Unevaluable(`${label}: ${op} must be true or false.`);
      if ((value !== MISSING) === operand) return null;
      return fail(operand ? 'is missing' : `exists (${show(value)}), and ${op} is false`);
    }
  }
  if (!known(op)) throw new Unevaluable(`${label}: ${op} is not an operator.`);
  checkOperand(op, operand, label);
  if (value === MISSING) return fail(`is missing (${op} ${show(operand)})`);
  switch (op) {
    case '$eq':
      return deepEqual(value, operand) ? null : fail(`is ${show(value)}, not ${show(operand)}`);
    case '$neq':
      return deepEqual(value, operand) ? fail(`is ${show(value)} ($neq)`) : null;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const order = ORDER[op] as (typeof ORDER)[string];
      const d =
        typeof value === 'number' && typeof operand === 'number'
          ? value - operand
          : typeof value === 'string' && typeof operand === 'string'
            ? compareStrings(value, operand)
            : null;
      if (d === null) return fail(`is ${show(value)}, which cannot be compared with ${show(operand)}`);
      return order.test(d) ? null : fail(`is ${show(value)}, not ${order.words} ${show(operand)}`);
    }
    case '$in':
    case '$nin': {
      const found = isIn(value, operand);
      if (found === null) return fail(`is ${show(value)}, which ${op} cannot look in`);
      if (op === '$in') return found ? null : fail(`is ${show(value)}, not in ${show(operand)}`);
      return found ? fail(`is ${show(value)}, which is in ${show(operand)} ($nin)`) : null;
    }
    case '$startsWith':
    case '$endsWith': {
      if (typeof value !== 'string') return fail(`is ${show(value)}, not a string (${op})`);
      const affixes = typeof operand === 'string' ? [operand] : (operand as string[]);
      const has = affixes.some((a) => (op === '$startsWith' ? value.startsWith(a) : value.endsWith(a)));
      return has
        ? null
        : fail(`is ${show(value)}, which does not ${op === '$startsWith' ? 'start' : 'end'} with ${show(operand)}`);
    }
  }
  throw new Unevaluable(`${label}: ${op} is not an operator.`);
}

function checkOperand(op: string, operand: unknown, label: string): void {
  const problem = operandProblem(op, operand);
  if (problem && problem !== 'recurse' && problem !== 'recurse-list')
    throw new Unevaluable(`${label}: ${op} ${problem}`);
}

/**
 * `$in`: a list operand holds the value (a list value: one of its elements); a string operand is a substring of a
 * string value, or an element of a list value; another plain operand is an element of a list value. null when the
 * value is of no kind it can look in (an object; a number against a string).
 */
function isIn(value: unknown, operand: unknown): boolean | null {
  if (Array.isArray(operand)) {
    if (Array.isArray(value)) return value.some((v) => operand.some((o) => samePrimitive(v, o)));
    return isPrimitive(value) ? operand.some((o) => samePrimitive(value, o)) : null;
  }
  if (Array.isArray(value)) return value.some((v) => samePrimitive(v, operand));
  if (typeof value === 'string' && typeof operand === 'string') return value.includes(operand);
  return null;
}
