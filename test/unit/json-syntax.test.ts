// Unit tests of the JSON syntax locator (lambdas/domain/json-syntax.ts) and the 400 message it gives
// (json-body.ts): it agrees with JSON.parse on what is valid, and says where (line, column) and why it is not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findJsonSyntaxError } from '../../lambdas/domain/json-syntax';
import { invalidJsonMessage } from '../../lambdas/handlers/middleware/json-body';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('findJsonSyntaxError', () => {
  it.each([
    ['{\n  "from": "a@example.com",\n  "to": x\n}', 3, 9, 'expected a value'],
    ['{"scopes": [', 1, 13, 'the body ends too early: expected a value or `]`'],
    ['{"a":1,}', 1, 8, 'a comma before `}` is not allowed'],
    ['[1,]', 1, 4, 'a comma before `]` is not allowed'],
    ["{'a':1}", 1, 2, 'expected a field name in double quotes'],
    ['{"a" 1}', 1, 6, 'expected `:` after the field name, found `1`'],
    ['{"a":01}', 1, 6, 'a number is malformed here: `01`'],
    ['"abc', 1, 1, 'a string opened here is never closed'],
    ['{"a":\n"x\ny"}', 2, 3, 'raw control character (a line break)'],
    ['{"a":"\\q"}', 1, 7, '`\\q` is not an escape JSON has'],
    ['{} x', 1, 4, 'expected the end of the body'],
    ['\uFEFF{}', 1, 1, 'a byte order mark'],
    ['[1 2]', 1, 4, 'expected `,` or `]` after a value in a list, found `2`'],
    ['{"é😀":1 2}', 1, 9, 'expected `,` or `}`'],
  ])('%j: line %i, column %i', (text, line, column, problem) => {
    expect(parses(text)).toBe(false);
    const found = findJsonSyntaxError(text);
    expect(found).toMatchObject({ line, column });
    expect(found?.problem).toContain(problem);
  });

  it('finds nothing in any valid JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(undefined, 2, '\t'), (value, indent) => {
        expect(findJsonSyntaxError(JSON.stringify(value, null, indent))).toBeNull();
      }),
    );
  });

  it('agrees with JSON.parse on any text near valid JSON (a character deleted, inserted or replaced)', () => {
    const edit = fc.tuple(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.nat(),
      fc.constantFrom('delete', 'insert', 'replace'),
      fc.constantFrom(...'{}[],:"\\ \n0123456789-+.eEtfnulx\'\u0001'.split('')),
    );
    fc.assert(
      fc.property(edit, ([text, at, how, char]) => {
        const i = text.length ? at % text.length : 0;
        const edited =
          how === 'delete'
            ? text.slice(0, i) + text.slice(i + 1)
            : text.slice(0, i) + char + text.slice(how === 'insert' ? i : i + 1);
        expect(findJsonSyntaxError(edited) === null).toBe(parses(edited));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with JSON.parse on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        expect(findJsonSyntaxError(text) === null).toBe(parses(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('walks 1,000,000 open brackets without recursion', () => {
    expect(findJsonSyntaxError('['.repeat(1_000_000))?.problem).toMatch(/ends too early/);
  });
});

describe('the 400 message', () => {
  it('says where and why, in words a person reads', () => {
    expect(invalidJsonMessage('{"to": [1,]}')).toBe(
      'The request body is not valid JSON: line 1, column 11: a comma before `]` is not allowed (nothing follows it).',
    );
  });
});
