// Every 422 a request schema can give speaks plain words: each route's body, query and form schema (the ones the
// OpenAPI document lists, from the handlers) is fed generated input, and no message, top-level or in `details`,
// carries zod's own wording; each names its field (lambdas/handlers/http/validate.ts, domain/field-problems.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import { ValidationError } from '../../lambdas/domain/errors';
import { displayPath, suggestField, summary } from '../../lambdas/domain/field-problems';
import { requestSchemasByRoute } from '../../lambdas/handlers/http/openapi';
import { fieldsAt, validate } from '../../lambdas/handlers/http/validate';

/** zod's English (locales/en): none of it may reach a caller. */
const ZOD_WORDING =
  /Invalid input|expected [a-z]+, received|Unrecognized key|Too (small|big)|\bInvalid\b|must match pattern|expected one of|received undefined/;

/** Values a caller might send: anything at all, and some that are nearly right. */
const plausible = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constantFrom(
    'a@example.com',
    'Ada <ada@example.com>',
    'not an address',
    '',
    ' ',
    'in 1 hour',
    'tomorrow at 9am',
    'soonish',
    '2020-01-01T00:00:00Z',
    'https://example.com/hook',
    'email.delivered',
    ['a@example.com', 'b@'],
    [],
    null,
    -1,
    Number.MAX_VALUE,
    'x'.repeat(300),
  ),
);

/** A value for the field at `path` of `schema`: an object of its fields, a list of such, or anything. */
function valueAt(schema: z.ZodType, path: readonly PropertyKey[], depth: number): fc.Arbitrary<unknown> {
  const fields = fieldsAt(schema, path);
  const elementFields = fieldsAt(schema, [...path, 0]);
  const options: fc.Arbitrary<unknown>[] = [plausible];
  if (depth < 3 && fields.length) options.push(objectOf(schema, path, fields, depth));
  if (depth < 3 && elementFields.length)
    options.push(fc.array(objectOf(schema, [...path, 0], elementFields, depth), { maxLength: 3 }));
  return fc.oneof(...options);
}

function objectOf(schema: z.ZodType, path: readonly PropertyKey[], fields: string[], depth: number) {
  const known = Object.fromEntries(fields.map((f) => [f, valueAt(schema, [...path, f], depth + 1)]));
  // A near miss (camelCase, a typo) or a stranger beside the fields.
  const stranger = fc.constantFrom(
    ...fields.map((f) => f.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())),
    ...fields.map((f) => `${f}s`),
    'extra',
    '__proto__',
  );
  return fc
    .tuple(fc.record(known, { requiredKeys: [] }), fc.option(fc.tuple(stranger, plausible), { nil: undefined }))
    .map(([body, extra]) => (extra ? { ...body, [extra[0]]: extra[1] } : body));
}

const cases = Object.entries(requestSchemasByRoute()).flatMap(([route, schemas]) => [
  ...(schemas?.body ? [{ route, where: 'body' as const, schema: schemas.body }] : []),
  ...(schemas?.query ? [{ route, where: 'query' as const, schema: schemas.query }] : []),
  ...(schemas?.form ? [{ route, where: 'form' as const, schema: schemas.form.schema }] : []),
]);

describe('422 wording', () => {
  it('covers the routes that take input', () => {
    expect(cases.map((c) => c.route)).toEqual(
      expect.arrayContaining(['sendEmail', 'sendEmailBatch', 'updateEmail', 'createApiKey', 'createWebhook']),
    );
  });

  it.each(cases)('$route ($where): plain words naming the field, never zod wording', ({ schema, where }) => {
    const input =
      where === 'query'
        ? fc.dictionary(fc.constantFrom(...fieldsAt(schema, []), 'foo', 'Limit'), fc.string({ maxLength: 12 }))
        : fc.oneof(valueAt(schema, [], 0), fc.array(valueAt(schema, [0], 1), { maxLength: 3 }));
    fc.assert(
      fc.property(input, (value) => {
        let error: unknown;
        try {
          validate(schema, value, where);
          return;
        } catch (caught) {
          error = caught;
        }
        expect(error).toBeInstanceOf(ValidationError);
        const { message, details = [] } = error as ValidationError;
        expect(details.length).toBeGreaterThan(0);
        expect(message).toBe(summary(details));
        for (const detail of [{ path: '', message }, ...details]) {
          expect(detail.message, detail.message).not.toMatch(ZOD_WORDING);
          expect(detail.message.includes('\u0000'), detail.message).toBe(false);
          expect(detail.message.length).toBeGreaterThan(5);
        }
        for (const detail of details) {
          // A field problem names its field; a problem of the whole request says which part.
          const named = /`[^`]+`/.test(detail.message) || /^The (request body|query string|form) /.test(detail.message);
          expect(named || detail.path === where, `${detail.path}: ${detail.message}`).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('field paths and suggestions', () => {
  it.each([
    [['to', 1], 'to[1]'],
    [[0, 'subject'], '[0].subject'],
    [['headers', 'X-Campaign'], 'headers.X-Campaign'],
    [['headers', 'a b'], 'headers["a b"]'],
    [['attachments', 0, 'content'], 'attachments[0].content'],
  ])('%j is written %s', (path, shown) => {
    expect(displayPath(path)).toBe(shown);
  });

  it.each([
    ['replyTo', 'reply_to'],
    ['ReplyTo', 'reply_to'],
    ['scheduledAt', 'scheduled_at'],
    ['subjet', 'subject'],
    ['Html', 'html'],
    ['attachment', 'attachments'],
    ['colour', undefined],
    ['x', undefined],
  ])('%s → %s', (unknown, meant) => {
    const known = ['from', 'to', 'subject', 'html', 'text', 'reply_to', 'scheduled_at', 'attachments', 'cc', 'bcc'];
    expect(suggestField(unknown, known)).toBe(meant);
  });
});
