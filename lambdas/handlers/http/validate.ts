// zod at the HTTP boundary: a failed parse becomes a 422 listing every problem with its path.
import type * as z from 'zod';
import { ValidationError } from '../../domain/errors';

/**
 * `fieldNames`: Resend's name for a 422 whose every problem is about one field (e.g. permission →
 * invalid_access), beside the defaults below.
 */
export function validate<T extends z.ZodType>(
  schema: T,
  input: unknown,
  where = 'body',
  fieldNames: Readonly<Record<string, string>> = {},
): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.flatMap(explained);
  const name = resendName(issues, input, { from: 'invalid_from_address', ...fieldNames });
  throw new ValidationError(`The request ${where} is invalid.`, {
    details: issues.map((issue) => ({
      path: issue.path.length ? issue.path.join('.') : where,
      message: issue.message,
    })),
    ...(name ? { errorName: name } : {}),
  });
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

interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly code?: string;
  readonly errors?: readonly (readonly Issue[])[];
}

/**
 * A union that failed says only "Invalid input". When every branch but one failed on the value's type (`to` is
 * a string, so the list branch is moot), that one branch's own problems are the explanation: report those.
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
