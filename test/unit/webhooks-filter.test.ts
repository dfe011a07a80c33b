// Webhook payload filters (domain/webhooks/filter.ts): every example of Hookdeck Outpost's filter documentation
// gives the answer Outpost documents; Sendflow's own view of an event (data.to as a list, tags); reasons that name
// the failing clause; validation with paths and bounds; and a fast-check property: fuzzed filters and events never
// throw, and what validation accepts the matcher can always evaluate.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emailEvent, type SendflowEvent } from '../../lambdas/domain/events';
import {
  EVENT_FIELDS,
  evaluateFilter,
  FILTER_LIMITS,
  FILTER_OPERATORS,
  filterInput,
  filterProblems,
} from '../../lambdas/domain/webhooks/filter';

interface Example {
  readonly doc: string;
  readonly filter: Record<string, unknown>;
  readonly event: Record<string, unknown>;
  readonly matches: boolean;
}

/** An Outpost event (its five top-level properties: docs/content/features/filter.mdoc, "Event Structure"). */
const outpost = (data: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({
  id: 'evt_1',
  topic: 'orders',
  time: '2025-01-15T12:00:00Z',
  metadata: {},
  data,
  ...rest,
});

/**
 * Every filter of Outpost's documentation (hookdeck/outpost: docs/content/features/filter.mdoc, "Destination
 * Filters", and the portal's filter syntax guide, internal/portal/src/common/FilterSyntaxGuide), each with events
 * it documents as matching and not matching.
 */
const OUTPOST_EXAMPLES: readonly Example[] = [
  // "Exact Match": match a field value exactly.
  { doc: 'exact match', filter: { data: { status: 'paid' } }, event: outpost({ status: 'paid' }), matches: true },
  { doc: 'exact match', filter: { data: { status: 'paid' } }, event: outpost({ status: 'pending' }), matches: false },
  { doc: 'exact match', filter: { data: { status: 'paid' } }, event: outpost({}), matches: false },
  // "Multiple conditions are implicitly combined with AND".
  {
    doc: 'implicit AND',
    filter: { data: { status: 'paid', currency: 'usd' } },
    event: outpost({ status: 'paid', currency: 'usd' }),
    matches: true,
  },
  {
    doc: 'implicit AND',
    filter: { data: { status: 'paid', currency: 'usd' } },
    event: outpost({ status: 'paid', currency: 'eur' }),
    matches: false,
  },
  // "Nested objects are supported".
  {
    doc: 'nested object',
    filter: { data: { customer: { tier: 'premium' } } },
    event: outpost({ customer: { tier: 'premium', id: 'c_1' } }),
    matches: true,
  },
  {
    doc: 'nested object',
    filter: { data: { customer: { tier: 'premium' } } },
    event: outpost({ customer: { tier: 'basic' } }),
    matches: false,
  },
  // "Arrays match if they contain the specified value": "This matches events like { "tags": ["urgent", "support"] }".
  {
    doc: 'array contains',
    filter: { data: { tags: 'urgent' } },
    event: outpost({ tags: ['urgent', 'support'] }),
    matches: true,
  },
  {
    doc: 'array contains',
    filter: { data: { tags: 'urgent' } },
    event: outpost({ tags: ['support'] }),
    matches: false,
  },
  // "Comparison": `{ "data": { "amount": { "$gte": 100, "$lt": 500 } } }`.
  {
    doc: '$gte/$lt',
    filter: { data: { amount: { $gte: 100, $lt: 500 } } },
    event: outpost({ amount: 100 }),
    matches: true,
  },
  {
    doc: '$gte/$lt',
    filter: { data: { amount: { $gte: 100, $lt: 500 } } },
    event: outpost({ amount: 499 }),
    matches: true,
  },
  {
    doc: '$gte/$lt',
    filter: { data: { amount: { $gte: 100, $lt: 500 } } },
    event: outpost({ amount: 500 }),
    matches: false,
  },
  {
    doc: '$gte/$lt',
    filter: { data: { amount: { $gte: 100, $lt: 500 } } },
    event: outpost({ amount: 99 }),
    matches: false,
  },
  // The comparison table: $eq equals, $neq not equals, $gt greater than, $lte less than or equal.
  { doc: '$eq', filter: { data: { status: { $eq: 'paid' } } }, event: outpost({ status: 'paid' }), matches: true },
  { doc: '$eq', filter: { data: { status: { $eq: 'paid' } } }, event: outpost({ status: 'void' }), matches: false },
  { doc: '$neq', filter: { data: { status: { $neq: 'paid' } } }, event: outpost({ status: 'void' }), matches: true },
  { doc: '$neq', filter: { data: { status: { $neq: 'paid' } } }, event: outpost({ status: 'paid' }), matches: false },
  { doc: '$gt', filter: { data: { amount: { $gt: 100 } } }, event: outpost({ amount: 101 }), matches: true },
  { doc: '$gt', filter: { data: { amount: { $gt: 100 } } }, event: outpost({ amount: 100 }), matches: false },
  { doc: '$lte', filter: { data: { amount: { $lte: 100 } } }, event: outpost({ amount: 100 }), matches: true },
  { doc: '$lte', filter: { data: { amount: { $lte: 100 } } }, event: outpost({ amount: 101 }), matches: false },
  // "Membership": `{ "data": { "status": { "$in": ["pending", "processing"] } } }`; `$in`: "Value in array, or
  // substring match"; `$nin`: "Value not in array".
  {
    doc: '$in list',
    filter: { data: { status: { $in: ['pending', 'processing'] } } },
    event: outpost({ status: 'processing' }),
    matches: true,
  },
  {
    doc: '$in list',
    filter: { data: { status: { $in: ['pending', 'processing'] } } },
    event: outpost({ status: 'paid' }),
    matches: false,
  },
  {
    doc: '$in substring',
    filter: { data: { email: { $in: 'example' } } },
    event: outpost({ email: 'a@example.com' }),
    matches: true,
  },
  {
    doc: '$in substring',
    filter: { data: { email: { $in: 'example' } } },
    event: outpost({ email: 'a@acme.test' }),
    matches: false,
  },
  {
    doc: '$nin',
    filter: { data: { status: { $nin: ['void', 'refunded'] } } },
    event: outpost({ status: 'paid' }),
    matches: true,
  },
  {
    doc: '$nin',
    filter: { data: { status: { $nin: ['void', 'refunded'] } } },
    event: outpost({ status: 'void' }),
    matches: false,
  },
  // "String": `{ "data": { "email": { "$endsWith": "@example.com" } } }`; `$startsWith`.
  {
    doc: '$endsWith',
    filter: { data: { email: { $endsWith: '@example.com' } } },
    event: outpost({ email: 'ada@example.com' }),
    matches: true,
  },
  {
    doc: '$endsWith',
    filter: { data: { email: { $endsWith: '@example.com' } } },
    event: outpost({ email: 'ada@example.org' }),
    matches: false,
  },
  {
    doc: '$startsWith',
    filter: { data: { sku: { $startsWith: 'pro-' } } },
    event: outpost({ sku: 'pro-1' }),
    matches: true,
  },
  {
    doc: '$startsWith',
    filter: { data: { sku: { $startsWith: 'pro-' } } },
    event: outpost({ sku: 'free-1' }),
    matches: false,
  },
  // "Existence": `{ "data": { "deleted_at": { "$exist": false } } }`; the guide's `{ "metadata": { "$exist": true } }`.
  {
    doc: '$exist false',
    filter: { data: { deleted_at: { $exist: false } } },
    event: outpost({ id: 1 }),
    matches: true,
  },
  {
    doc: '$exist false',
    filter: { data: { deleted_at: { $exist: false } } },
    event: outpost({ deleted_at: '2025-01-02T00:00:00Z' }),
    matches: false,
  },
  {
    doc: '$exist true',
    filter: { data: { metadata: { $exist: true } } },
    event: outpost({ metadata: { a: 1 } }),
    matches: true,
  },
  { doc: '$exist true', filter: { data: { metadata: { $exist: true } } }, event: outpost({ id: 1 }), matches: false },
  // "$or — Match any condition".
  {
    doc: '$or',
    filter: { $or: [{ data: { status: 'paid' } }, { data: { status: 'shipped' } }] },
    event: outpost({ status: 'shipped' }),
    matches: true,
  },
  {
    doc: '$or',
    filter: { $or: [{ data: { status: 'paid' } }, { data: { status: 'shipped' } }] },
    event: outpost({ status: 'pending' }),
    matches: false,
  },
  // "$and — Explicit AND".
  {
    doc: '$and',
    filter: { $and: [{ data: { status: 'active' } }, { data: { amount: { $gte: 100 } } }] },
    event: outpost({ status: 'active', amount: 150 }),
    matches: true,
  },
  {
    doc: '$and',
    filter: { $and: [{ data: { status: 'active' } }, { data: { amount: { $gte: 100 } } }] },
    event: outpost({ status: 'active', amount: 50 }),
    matches: false,
  },
  // "$not — Negate a condition".
  {
    doc: '$not',
    filter: { data: { status: { $not: { $in: ['cancelled', 'refunded'] } } } },
    event: outpost({ status: 'active' }),
    matches: true,
  },
  {
    doc: '$not',
    filter: { data: { status: { $not: { $in: ['cancelled', 'refunded'] } } } },
    event: outpost({ status: 'refunded' }),
    matches: false,
  },
  // "Common Examples": by metadata; high-value orders; a time range.
  {
    doc: 'metadata',
    filter: { metadata: { source: 'api' } },
    event: outpost({}, { metadata: { source: 'api' } }),
    matches: true,
  },
  {
    doc: 'metadata',
    filter: { metadata: { source: 'api' } },
    event: outpost({}, { metadata: { source: 'dashboard' } }),
    matches: false,
  },
  { doc: 'high value', filter: { data: { amount: { $gte: 1000 } } }, event: outpost({ amount: 1000 }), matches: true },
  {
    doc: 'high value',
    filter: { data: { amount: { $gte: 1000 } } },
    event: outpost({ amount: 999.99 }),
    matches: false,
  },
  ...[
    ['2025-01-15T12:00:00Z', true],
    ['2025-01-01T00:00:00Z', true],
    ['2025-02-01T00:00:00Z', false],
    ['2024-12-31T23:59:59Z', false],
  ].map(([time, matches]) => ({
    doc: 'time range',
    filter: { time: { $gte: '2025-01-01T00:00:00Z', $lt: '2025-02-01T00:00:00Z' } },
    event: outpost({}, { time }),
    matches: matches as boolean,
  })),
  // "Setting a Filter via API": `{ "data": { "status": { "$in": ["paid", "shipped"] } } }`; "To remove a filter, set
  // it to an empty object".
  {
    doc: 'API example',
    filter: { data: { status: { $in: ['paid', 'shipped'] } } },
    event: outpost({ status: 'shipped' }),
    matches: true,
  },
  {
    doc: 'API example',
    filter: { data: { status: { $in: ['paid', 'shipped'] } } },
    event: outpost({ status: 'pending' }),
    matches: false,
  },
  { doc: 'empty filter', filter: {}, event: outpost({ anything: 1 }), matches: true },
  // The portal's guide: top-level properties together; exact match on data.type; AND; `$in` of types; `$or` of types.
  {
    doc: 'guide: top level',
    filter: { topic: 'order.created', data: { status: 'paid' }, metadata: { source: 'api' } },
    event: outpost({ status: 'paid' }, { topic: 'order.created', metadata: { source: 'api' } }),
    matches: true,
  },
  {
    doc: 'guide: top level',
    filter: { topic: 'order.created', data: { status: 'paid' }, metadata: { source: 'api' } },
    event: outpost({ status: 'paid' }, { topic: 'order.updated', metadata: { source: 'api' } }),
    matches: false,
  },
  {
    doc: 'guide: exact',
    filter: { data: { type: 'order.created' } },
    event: outpost({ type: 'order.created' }),
    matches: true,
  },
  {
    doc: 'guide: exact',
    filter: { data: { type: 'order.created' } },
    event: outpost({ type: 'order.updated' }),
    matches: false,
  },
  {
    doc: 'guide: AND',
    filter: { data: { type: 'order.created', status: 'paid' } },
    event: outpost({ type: 'order.created', status: 'paid' }),
    matches: true,
  },
  {
    doc: 'guide: AND',
    filter: { data: { type: 'order.created', status: 'paid' } },
    event: outpost({ type: 'order.created', status: 'void' }),
    matches: false,
  },
  {
    doc: 'guide: $in types',
    filter: { data: { type: { $in: ['order.created', 'order.updated'] } } },
    event: outpost({ type: 'order.updated' }),
    matches: true,
  },
  {
    doc: 'guide: $in types',
    filter: { data: { type: { $in: ['order.created', 'order.updated'] } } },
    event: outpost({ type: 'order.deleted' }),
    matches: false,
  },
  {
    doc: 'guide: $or types',
    filter: { $or: [{ data: { type: 'order.created' } }, { data: { type: 'order.updated' } }] },
    event: outpost({ type: 'order.created' }),
    matches: true,
  },
  {
    doc: 'guide: $or types',
    filter: { $or: [{ data: { type: 'order.created' } }, { data: { type: 'order.updated' } }] },
    event: outpost({ type: 'order.deleted' }),
    matches: false,
  },
];

describe("Outpost's documented filter examples", () => {
  it.each(OUTPOST_EXAMPLES.map((e) => [e.doc, JSON.stringify(e.filter), JSON.stringify(e.event.data), e] as const))(
    '%s: %s on data %s',
    (_doc, _filter, _data, example) => {
      // Act
      const verdict = evaluateFilter(example.filter, example.event);
      // Assert
      expect(verdict.matches).toBe(example.matches);
      expect(verdict.unevaluable).toBeUndefined();
      expect(verdict.reason === null).toBe(example.matches);
    },
  );

  it('covers every operator Outpost documents', () => {
    const used = new Set(OUTPOST_EXAMPLES.flatMap((e) => JSON.stringify(e.filter).match(/\$[A-Za-z]+/g) ?? []));
    expect([...used].sort()).toEqual(
      [
        '$and',
        '$endsWith',
        '$eq',
        '$exist',
        '$gt',
        '$gte',
        '$in',
        '$lt',
        '$lte',
        '$neq',
        '$nin',
        '$not',
        '$or',
        '$startsWith',
      ].sort(),
    );
  });
});

const EMAIL = {
  id: 'em_01J0000000000000000000000',
  accountId: 'acct_1',
  mode: 'test' as const,
  from: 'Acme <news@acme.test>',
  subject: 'Hello',
  tags: [
    { name: 'plan', value: 'pro' },
    { name: 'campaign', value: 'spring' },
  ],
};
const seeded = (n: number) => new Uint8Array(n).fill(7);
const bounced: SendflowEvent = emailEvent(
  EMAIL,
  'Ada <ada@example.com>',
  'email.bounced',
  { bounce_type: 'Permanent' },
  { at: Date.parse('2026-01-02T03:04:05Z') },
  seeded,
);

describe('what a filter sees of a Sendflow event', () => {
  it('the standard body (data.to a list, as Resend sends it) and the email tags as an object', () => {
    // Act
    const input = filterInput(bounced);
    // Assert
    expect(input).toMatchObject({
      type: 'email.bounced',
      email_id: EMAIL.id,
      to: 'ada@example.com',
      data: { to: ['ada@example.com'], from: EMAIL.from, bounce: { type: 'Permanent' } },
      tags: { plan: 'pro', campaign: 'spring' },
    });
    for (const key of Object.keys(input)) expect(EVENT_FIELDS).toContain(key);
  });

  it.each([
    [{ data: { to: 'ada@example.com' } }, true],
    [{ data: { to: 'bob@example.com' } }, false],
    [{ data: { to: { $in: ['bob@example.com', 'ada@example.com'] } } }, true],
    [{ data: { to: { $nin: ['ada@example.com'] } } }, false],
    [{ to: { $endsWith: '@example.com' } }, true],
    [{ tags: { plan: 'pro' } }, true],
    [{ tags: { plan: 'free' } }, false],
    [{ tags: { region: { $exists: false } } }, true],
    [{ type: 'email.bounced', data: { bounce: { type: 'Permanent' } } }, true],
    [{ type: { $in: ['email.delivered'] } }, false],
    [{ created_at: { $gte: '2026-01-01T00:00:00Z' } }, true],
    [{ data: { to: 'ada@example.com' }, tags: { plan: 'pro' } }, true],
  ])('%j → %s', (filter, matches) => {
    expect(evaluateFilter(filter, filterInput(bounced)).matches).toBe(matches);
  });

  it('an event without tags: a tag condition fails, `$exist: false` holds', () => {
    const plain = filterInput(
      emailEvent({ ...EMAIL, tags: [] }, 'ada@example.com', 'email.sent', {}, { at: 0 }, seeded),
    );
    expect(plain.tags).toBeUndefined();
    expect(evaluateFilter({ tags: { plan: 'pro' } }, plain)).toEqual({
      matches: false,
      reason: '`tags.plan` is missing (expected "pro")',
    });
    expect(evaluateFilter({ tags: { $exist: false } }, plain).matches).toBe(true);
  });
});

describe('the reason names the clause that failed', () => {
  const input = filterInput(bounced);
  it.each([
    [{ data: { to: 'bob@example.com' } }, '`data.to` is ["ada@example.com"], which does not contain "bob@example.com"'],
    [{ tags: { plan: { $in: ['scale', 'enterprise'] } } }, '`tags.plan` is "pro", not in ["scale","enterprise"]'],
    [{ type: 'email.delivered' }, '`type` is "email.bounced", not "email.delivered"'],
    [{ data: { subject: { $startsWith: 'Re:' } } }, '`data.subject` is "Hello", which does not start with "Re:"'],
    [{ data: { amount: { $gt: 5 } } }, '`data.amount` is missing ($gt 5)'],
    [
      { $or: [{ type: 'email.delivered' }, { tags: { plan: 'free' } }] },
      'matches none of the 2 conditions of $or (the first: `type` is "email.bounced", not "email.delivered")',
    ],
    [{ $not: { type: 'email.bounced' } }, 'matches the condition under $not ({"type":"email.bounced"})'],
    [
      { data: { to: 'ada@example.com', from: { $neq: EMAIL.from } } },
      `\`data.from\` is ${JSON.stringify(EMAIL.from)} ($neq)`,
    ],
  ])('%j', (filter, reason) => {
    expect(evaluateFilter(filter, input)).toEqual({ matches: false, reason });
  });
});

describe('filterProblems: what a stored filter may be', () => {
  it.each([
    [{ type: 'email.bounced' }],
    [{ data: { to: { $in: ['a@b.c'] } }, tags: { plan: 'pro' } }],
    [{ $or: [{ type: 'email.bounced' }, { $not: { tags: { plan: 'free' } } }] }],
    [{ data: { bounce: { type: { $exists: true } } } }],
    [{}],
  ])('accepts %j', (filter) => {
    expect(filterProblems(filter)).toEqual([]);
  });

  it.each([
    [[], [], 'must be a JSON object'],
    ['x', [], 'must be a JSON object'],
    [{ typ: 'email.bounced' }, ['typ'], 'is not a field of an event'],
    [{ data: { to: { $regex: 'a' } } }, ['data', 'to', '$regex'], 'is not an operator'],
    [{ $eq: 1 }, ['$eq'], 'applies to a field'],
    [{ data: { amount: { $gt: { a: 1 } } } }, ['data', 'amount', '$gt'], 'must be a number or a string'],
    [{ data: { to: { $in: [{ a: 1 }] } } }, ['data', 'to', '$in'], 'must list strings, numbers'],
    [{ data: { x: { $exist: 'yes' } } }, ['data', 'x', '$exist'], 'must be true or false'],
    [{ $or: [] }, ['$or'], 'non-empty list'],
    [{ $or: ['x'] }, ['$or', 0], 'object of event fields'],
    [{ data: { x: { $and: { a: 1 } } } }, ['data', 'x', '$and'], 'non-empty list'],
    [{ data: { x: {} } }, ['data', 'x'], 'empty condition'],
    [{ data: { x: { $startsWith: [] } } }, ['data', 'x', '$startsWith'], 'non-empty list of strings'],
    [{ data: { x: { $not: { $foo: 1 } } } }, ['data', 'x', '$not', '$foo'], 'is not an operator'],
  ])('refuses %j at %j', (filter, path, message) => {
    const [problem] = filterProblems(filter);
    expect(problem?.path).toEqual(path);
    expect(problem?.message).toContain(message);
  });

  it(`bounds the size (${FILTER_LIMITS.bytes} bytes) and the depth (${FILTER_LIMITS.depth} levels)`, () => {
    const big = { data: { to: { $in: Array.from({ length: 400 }, (_, i) => `user${i}@example.com`) } } };
    expect(filterProblems(big)[0]?.message).toMatch(/at most 4096 bytes of JSON; this one is \d+/);
    let deep: unknown = 1;
    for (let i = 0; i < 8; i++) deep = { a: deep };
    expect(filterProblems({ data: deep })[0]?.message).toBe('must nest at most 8 levels deep; this one nests 9.');
    expect(filterProblems({ data: (deep as { a: unknown }).a })).toEqual([]);
  });
});

// ---------- the property ----------

const operand = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, undefined),
);
const key = fc.oneof(
  fc.constantFrom(...EVENT_FIELDS, ...FILTER_OPERATORS, '$regex', '__proto__', 'constructor', 'to', 'plan', ''),
  fc.string({ maxLength: 6 }),
);
const condition: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    operand,
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(key, tie('node'), { maxKeys: 4 }),
  ),
})).node;
/** Filters of the grammar (mostly valid, so the matcher is exercised on what validation lets through). */
const primitive = fc.oneof(
  fc.string({ maxLength: 5 }),
  fc.integer({ min: -3, max: 3 }),
  fc.boolean(),
  fc.constant(null),
);
const grammar = fc.letrec((tie) => ({
  cond: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    primitive,
    fc.array(primitive, { minLength: 1, maxLength: 3 }),
    fc.dictionary(fc.constantFrom('to', 'plan', 'amount', 'x', 'bounce', 'type'), tie('cond'), {
      minKeys: 1,
      maxKeys: 3,
    }),
    fc.record({ $eq: fc.jsonValue({ maxDepth: 1 }) }),
    fc.record({ $neq: primitive }),
    fc.record({ $gt: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), $lte: fc.integer() }, { requiredKeys: [] }),
    fc.record({ $in: fc.oneof(fc.array(primitive, { maxLength: 3 }), fc.string({ maxLength: 3 })) }),
    fc.record({ $nin: fc.array(primitive, { maxLength: 3 }) }),
    fc.record({ $startsWith: fc.string({ maxLength: 3 }) }),
    fc.record({ $endsWith: fc.array(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 2 }) }),
    fc.record({ $exist: fc.boolean() }),
    fc.record({ $exists: fc.boolean() }),
    fc.record({ $not: tie('cond') }),
    fc.record({ $or: fc.array(tie('cond'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ $and: fc.array(tie('cond'), { minLength: 1, maxLength: 3 }) }),
  ),
  top: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.dictionary(fc.constantFrom(...EVENT_FIELDS), tie('cond'), { minKeys: 1, maxKeys: 3 }),
    fc.record({ $or: fc.array(tie('top'), { minLength: 1, maxLength: 2 }) }),
    fc.record({ $not: tie('top') }),
  ),
})).top;

const eventLike = fc.oneof(
  fc.constant(filterInput(bounced)),
  fc.record({
    type: fc.constantFrom('email.bounced', 'email.sent'),
    data: fc.dictionary(fc.constantFrom('to', 'from', 'amount', 'x', '__proto__'), fc.jsonValue({ maxDepth: 3 })),
    tags: fc.dictionary(fc.constantFrom('plan', 'region'), fc.string({ maxLength: 4 })),
  }),
  fc.jsonValue({ maxDepth: 4 }),
);

describe('fuzzed filters and events (fast-check)', () => {
  it('never throw; a filter validation accepts is always evaluable; $not negates', () => {
    fc.assert(
      fc.property(fc.oneof(condition, grammar), eventLike, (filter, event) => {
        const verdict = evaluateFilter(filter, event);
        expect(typeof verdict.matches).toBe('boolean');
        const problems = filterProblems(filter);
        for (const problem of problems) expect(problem.message).toMatch(/\S/);
        if (problems.length === 0) {
          expect(verdict.unevaluable).toBeUndefined();
          if (Object.keys(filter as object).length) {
            expect(evaluateFilter({ $not: filter }, event).matches).toBe(!verdict.matches);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('the grammar makes filters validation accepts, and both verdicts happen', () => {
    const samples = fc.sample(fc.tuple(grammar, eventLike), 500);
    const valid = samples.filter(([filter]) => filterProblems(filter).length === 0);
    const matched = valid.filter(([filter, event]) => evaluateFilter(filter, event).matches);
    expect(valid.length).toBeGreaterThan(250);
    expect(matched.length).toBeGreaterThan(25);
    expect(valid.length - matched.length).toBeGreaterThan(25);
  });
});
