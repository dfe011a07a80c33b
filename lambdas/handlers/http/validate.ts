// zod at the HTTP boundary: a failed parse becomes a 422 listing every problem with its path.
import type { z } from 'zod';
import { ValidationError } from '../../domain/errors';

export function validate<T extends z.ZodType>(schema: T, input: unknown, where = 'body'): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(`The request ${where} is invalid.`, {
    details: result.error.issues.map((issue) => ({
      path: issue.path.length ? issue.path.join('.') : where,
      message: issue.message,
    })),
  });
}
