// Unit tests of the JSON body parser's nesting count (lambdas/handlers/middleware/json-body.ts): one pass over the
// text, brackets inside strings ignored (escaped quotes included), no recursion however deep the input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '../../lambdas/domain/errors';
import { jsonBody, jsonDepth, MAX_JSON_DEPTH } from '../../lambdas/handlers/middleware/json-body';

/** The reference: depth of a parsed value, counted recursively (fine for the shallow values generated here). */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe('jsonDepth', () => {
  it.each([
    ['1', 0],
    ['"[{"', 0],
    ['[]', 1],
    ['{"a":[1,{"b":[]}]}', 4],
    ['["\\\\"]', 1],
    ['["\\"[[["]', 1],
    ['[[],[[]],[]]', 3],
  ])('%s → %i', (text, depth) => {
    expect(jsonDepth(text)).toBe(depth);
  });

  it('counts 1,000,000 levels without recursion', () => {
    expect(jsonDepth(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`)).toBe(1_000_000);
  });

  it('agrees with the parsed value for any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        expect(jsonDepth(JSON.stringify(value))).toBe(depthOf(value));
      }),
    );
  });

  it('allows far more than the deepest body the API takes (a batch of emails with tags: 4)', () => {
    expect(MAX_JSON_DEPTH).toBeGreaterThanOrEqual(16);
  });
});

describe('jsonBody limits (what applies on AWS, where no local gateway refuses first)', () => {
  const run = (route: { largeBody?: true } | undefined, bytes: number) => {
    const request = {
      event: { body: JSON.stringify({ x: 'x'.repeat(bytes - 8) }), isBase64Encoded: false },
      context: { sendflow: { route } },
    };
    const before = jsonBody({ maxBytes: 1000, largeMaxBytes: 4000 }).before as (r: unknown) => void;
    before(request);
    return (request.context.sendflow as { body?: unknown }).body;
  };

  it('the send routes (largeBody) take up to largeMaxBytes, the others maxBytes: 413 above', () => {
    expect(run({ largeBody: true }, 3000)).toEqual({ x: 'x'.repeat(2992) });
    expect(() => run({ largeBody: true }, 4001)).toThrow(PayloadTooLargeError);
    expect(() => run({ largeBody: true }, 4001)).toThrow('Request body exceeds 4000 bytes.');
    expect(() => run({}, 1001)).toThrow('Request body exceeds 1000 bytes.');
    expect(() => run(undefined, 1001)).toThrow(PayloadTooLargeError);
  });
});
