// zod at the HTTP boundary: a failed parse becomes a 422 listing every problem with its path.
import type * as z from 'zod';
import { ValidationError } from '../../domain/errors';

export function validate<T extends z.ZodType>(schema: T, input: unknown, where = 'body'): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(`The request ${where} is invalid.`, {
    details: result.error.issues.flatMap(explained).map((issue) => ({
      path: issue.path.length ? issue.path.join('.') : where,
      message: issue.message,
    })),
  });
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
