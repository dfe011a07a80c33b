// The template rules (lambdas/domain/templates): Resend's `{{{KEY}}}` syntax parsed in one pass, mustache's logic
// refused with its position, values HTML-escaped in html only (unless declared unescaped), variables resolved by
// name (missing, unknown, mistyped), declarations checked; and, by property, that rendering is bounded: it never
// evaluates anything, never produces more than its budget, and takes time linear in what it reads and writes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  escapeHtml,
  type ParsedTemplate,
  parseTemplate,
  type RenderBudget,
  RenderBudgetExceeded,
  type RenderValue,
  renderTemplate,
  SYNTAX_LIMITS,
} from '../../lambdas/domain/templates/syntax';
import {
  contentProblems,
  parseContent,
  resolveValues,
  TEMPLATE_LIMITS,
  type TemplateContent,
  type TemplateVariable,
} from '../../lambdas/domain/templates/templates';

const AT = '2026-01-01T00:00:00.000Z';

function parsed(source: string): ParsedTemplate {
  const result = parseTemplate(source);
  if (!result.ok) throw new Error(result.problem);
  return result.parsed;
}

function problemOf(source: string): string {
  const result = parseTemplate(source);
  if (result.ok) throw new Error(`${source} parsed`);
  return result.problem;
}

const values = (entries: Record<string, string | RenderValue>) =>
  new Map(Object.entries(entries).map(([k, v]) => [k, typeof v === 'string' ? { text: v } : v]));
const big = (): RenderBudget => ({ remaining: 10_000_000 });

const variable = (key: string, rest: Partial<TemplateVariable> = {}): TemplateVariable => ({
  key,
  type: 'string',
  createdAt: AT,
  updatedAt: AT,
  ...rest,
});

const content = (overrides: Partial<TemplateContent> = {}): TemplateContent => ({
  html: '<p>Hi {{{NAME}}}</p>',
  replyTo: [],
  variables: [],
  ...overrides,
});

describe('parseTemplate: Resend’s syntax', () => {
  it('finds {{{KEY}}} and {{{KEY|fallback}}}, with spaces inside, in order of first use', () => {
    // Arrange
    const source = 'Hi {{{ NAME }}}, {{{PLAN|free}}} {{{NAME}}} {{{ X_1 | a b }}}';

    // Act
    const result = parsed(source);

    // Assert
    expect(result.keys).toEqual(['NAME', 'PLAN', 'X_1']);
    expect([...result.keysWithoutInlineFallback]).toEqual(['NAME']);
    expect(result.segments).toEqual([
      { kind: 'text', text: 'Hi ' },
      { kind: 'var', key: 'NAME' },
      { kind: 'text', text: ', ' },
      { kind: 'var', key: 'PLAN', fallback: 'free' },
      { kind: 'text', text: ' ' },
      { kind: 'var', key: 'NAME' },
      { kind: 'text', text: ' ' },
      { kind: 'var', key: 'X_1', fallback: 'a b' },
    ]);
  });

  it('leaves braces that are no tag alone: CSS, single and stray closing braces, "{{" before a space', () => {
    const source = '<style>a{color:red} b{{ }}</style> }}} {x} { {';
    expect(parsed(source).segments).toEqual([{ kind: 'text', text: source }]);
  });

  it.each([
    ['{{NAME}}', 'line 1, column 1', 'mustache tag'],
    ['ok\n  {{#each items}}{{/each}}', 'line 2, column 3', 'no sections, partials'],
    ['{{> footer}}', 'line 1, column 1', 'mustache tag'],
    ['{{=<% %>=}}', 'line 1, column 1', 'mustache tag'],
    ['{{&raw}}', 'line 1, column 1', 'mustache tag'],
    ['a\nb\nc {{{ not a key }}}', 'line 3, column 3', 'does not start a variable'],
    ['{{{constructor.constructor("x")()}}}', 'line 1, column 1', 'does not start a variable'],
    ['{{{{NAME}}}}', 'line 1, column 1', 'does not start a variable'],
    ['{{{NAME', 'line 1, column 1', 'does not start a variable'],
    [`{{{${'K'.repeat(51)}}}}`, 'line 1, column 1', 'does not start a variable'],
    [`{{{K|${'f'.repeat(201)}}}}`, 'line 1, column 1', 'does not start a variable'],
    ['{{{K|{nested}}}}', 'line 1, column 1', 'does not start a variable'],
  ])('refuses %j at %s', (source, where, why) => {
    const problem = problemOf(source);
    expect(problem).toContain(where);
    expect(problem).toContain(why);
  });

  it(`refuses more than ${SYNTAX_LIMITS.tags} variables in one field`, () => {
    expect(parseTemplate('{{{A}}}'.repeat(SYNTAX_LIMITS.tags)).ok).toBe(true);
    expect(problemOf('{{{A}}}'.repeat(SYNTAX_LIMITS.tags + 1))).toContain(`More than ${SYNTAX_LIMITS.tags}`);
  });
});

describe('renderTemplate', () => {
  it('escapes values in html, keeps them as given in text, and puts unescaped ones in as is', () => {
    // Arrange
    const template = parsed('<p title="{{{A}}}">{{{A}}} {{{B}}}</p>');
    const given = values({ A: `<b>"Tom" & 'Jerry'</b>`, B: { text: '<i>ok</i>', unescaped: true } });

    // Act
    const html = renderTemplate(template, given, { escape: true, budget: big() });
    const text = renderTemplate(template, given, { escape: false, budget: big() });

    // Assert
    const escaped = '&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;';
    expect(html).toBe(`<p title="${escaped}">${escaped} <i>ok</i></p>`);
    expect(text).toBe(`<p title="<b>"Tom" & 'Jerry'</b>"><b>"Tom" & 'Jerry'</b> <i>ok</i></p>`);
  });

  it('uses an inline fallback (template text) when a value is absent; throws with neither', () => {
    const template = parsed('Hi {{{NAME|<b>there</b>}}}');
    expect(renderTemplate(template, values({}), { escape: true, budget: big() })).toBe('Hi <b>there</b>');
    expect(renderTemplate(template, values({ NAME: 'Ada' }), { escape: true, budget: big() })).toBe('Hi Ada');
    expect(() => renderTemplate(parsed('{{{X}}}'), values({}), { escape: true, budget: big() })).toThrow(/X/);
  });

  it('stops at the budget, which it leaves spent, shared by successive renders', () => {
    // Arrange
    const template = parsed('{{{A}}}{{{A}}}{{{A}}}');
    const budget: RenderBudget = { remaining: 25 };

    // Act / Assert
    expect(renderTemplate(template, values({ A: 'é'.repeat(4) }), { escape: false, budget })).toHaveLength(12);
    expect(budget.remaining).toBe(1);
    expect(() => renderTemplate(parsed('xy'), values({}), { escape: false, budget })).toThrow(RenderBudgetExceeded);
  });

  it('looks values up by key only: __proto__, constructor and toString are keys like any other', () => {
    const template = parsed('{{{__proto__}}}|{{{constructor}}}|{{{toString|none}}}');
    const given = new Map([
      ['__proto__', { text: 'p' }],
      ['constructor', { text: 'c' }],
    ]);
    expect(renderTemplate(template, given, { escape: true, budget: big() })).toBe('p|c|none');
  });
});

describe('resolveValues', () => {
  const version = content({
    subject: 'Order {{{ORDER}}}',
    html: '<p>{{{NAME|friend}}} {{{PRICE}}} {{{BODY}}}</p>',
    variables: [
      variable('PRICE', { type: 'number', fallback: 25 }),
      variable('BODY', { unescaped: true, fallback: '' }),
      variable('UNUSED'),
      variable('NAME'),
    ],
  });
  const parse = () => {
    const result = parseContent(version);
    if (!result.ok) throw new Error('parse');
    return result.parsed;
  };

  it('takes given values of the declared type, else fallbacks; undeclared keys the template uses are strings', () => {
    const { values: resolved, problems } = resolveValues(version, parse(), { ORDER: 'A-1', UNUSED: 'u', PRICE: 3 });
    expect(problems).toEqual([]);
    expect(Object.fromEntries(resolved)).toEqual({
      ORDER: { text: 'A-1' },
      UNUSED: { text: 'u' },
      PRICE: { text: '3' },
      BODY: { text: '', unescaped: true },
    });
  });

  it('names every missing, unknown and mistyped variable, and gives no values then', () => {
    const { values: resolved, problems } = resolveValues(version, parse(), { PRICE: '3', COLOUR: 'red', NAME: 7 });
    expect(resolved.size).toBe(0);
    expect(problems).toEqual([
      { path: 'variables.PRICE', message: 'PRICE is a number variable: give a number.' },
      {
        path: 'variables.COLOUR',
        message: 'COLOUR is not a variable of this template (its variables: PRICE, BODY, UNUSED, NAME, ORDER).',
      },
      { path: 'variables.NAME', message: 'NAME is a string variable: give a string.' },
      { path: 'variables.ORDER', message: 'ORDER is required: the template declares no fallback_value for it.' },
      { path: 'variables.UNUSED', message: 'UNUSED is required: the template declares no fallback_value for it.' },
    ]);
  });

  it('refuses __proto__ given to a template that does not use it, without touching any prototype', () => {
    const given = JSON.parse('{"__proto__": "x", "ORDER": "1", "UNUSED": "u"}') as Record<string, unknown>;
    const { problems } = resolveValues(version, parse(), given);
    expect(problems.map((p) => p.path)).toEqual(['variables.__proto__']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('contentProblems', () => {
  it('accepts a valid version', () => {
    expect(
      contentProblems(
        content({ variables: [variable('NAME', { fallback: 'x' }), variable('N', { type: 'number', fallback: 1 })] }),
      ),
    ).toEqual([]);
  });

  it('lists syntax, key, duplicate, reserved, fallback type and unescaped problems with their paths', () => {
    const problems = contentProblems(
      content({
        subject: '{{NAME}}',
        text: '{{{',
        variables: [
          variable('bad key'),
          variable('EMAIL'),
          variable('N', { type: 'number', fallback: 'one' }),
          variable('N'),
          variable('M', { type: 'number', unescaped: true }),
          variable('S', { fallback: 'x'.repeat(TEMPLATE_LIMITS.fallback + 1) }),
        ],
      }),
    );
    expect(problems.map((p) => p.path)).toEqual([
      'subject',
      'text',
      'variables.0.key',
      'variables.1.key',
      'variables.2.fallback_value',
      'variables.3.key',
      'variables.4.unescaped',
      'variables.5.fallback_value',
    ]);
  });

  it(`refuses html and text over ${TEMPLATE_LIMITS.contentBytes} bytes together, and over ${TEMPLATE_LIMITS.variables} variables`, () => {
    const half = 'é'.repeat(TEMPLATE_LIMITS.contentBytes / 4 + 1);
    expect(contentProblems(content({ html: half, text: half })).map((p) => p.path)).toEqual(['html']);
    const many = Array.from({ length: TEMPLATE_LIMITS.variables + 1 }, (_, i) => variable(`V${i}`, { fallback: '' }));
    expect(contentProblems(content({ variables: many })).map((p) => p.path)).toEqual(['variables']);
  });
});

/** Template text built from pieces a hostile author would combine: braces of every count, keys, pipes, newlines. */
const hostilePiece = fc.oneof(
  fc.constantFrom('{', '}', '{{', '}}', '{{{', '}}}', '{{{{', '|', ' ', '\n', '#', '/', '>', '&', '<', '"'),
  fc.constantFrom('{{{A}}}', '{{{B|fb}}}', '{{{ A }}}', '{{A}}', '{{#x}}', '{{{A', 'A}}}'),
  fc.string({ maxLength: 8 }),
);
const hostileTemplate = fc.array(hostilePiece, { maxLength: 60 }).map((pieces) => pieces.join(''));

describe('bounds, by property (fast-check)', () => {
  it('text without "{{" renders to itself, escaped or not', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }).filter((s) => !s.includes('{{')),
        (source) => {
          const template = parsed(source);
          expect(renderTemplate(template, values({}), { escape: true, budget: big() })).toBe(source);
        },
      ),
    );
  });

  it('any text parses or is refused with a position, never throws; what parses renders within the budget or stops', () => {
    fc.assert(
      fc.property(hostileTemplate, fc.string({ maxLength: 50 }), fc.nat(400), (source, value, budgetBytes) => {
        const result = parseTemplate(source);
        if (!result.ok) {
          expect(result.problem).toMatch(/^(line \d+, column \d+: |More than)/);
          return;
        }
        const budget = { remaining: budgetBytes };
        try {
          const given = new Map(result.parsed.keys.map((key) => [key, { text: value }]));
          const out = renderTemplate(result.parsed, given, { escape: true, budget });
          expect(Buffer.byteLength(out, 'utf8')).toBeLessThanOrEqual(budgetBytes);
          expect(budget.remaining).toBe(budgetBytes - Buffer.byteLength(out, 'utf8'));
        } catch (error) {
          expect(error).toBeInstanceOf(RenderBudgetExceeded);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('a value never adds markup to html: it comes out exactly escaped, whatever it holds', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100, unit: 'binary' }), (value) => {
        const out = renderTemplate(parsed('<p>{{{V}}}</p>'), values({ V: value }), { escape: true, budget: big() });
        expect(out).toBe(`<p>${escapeHtml(value)}</p>`);
        expect(out.slice(3, -4)).not.toMatch(/[<>"']/);
      }),
      { numRuns: 300 },
    );
  });

  it('parses and renders the largest hostile inputs in linear time (well under a second each)', () => {
    // The largest field (256 KiB) of what would make a backtracking parser crawl: opening braces without an end,
    // tags without a key, "{{{" followed by nearly-a-tag, and the most tags a field may have.
    const size = TEMPLATE_LIMITS.contentBytes;
    const hostile = [
      '{'.repeat(size),
      '{{ '.repeat(size / 3),
      `${'{{{ '.repeat(20)}`.padEnd(size, 'x'),
      `${'a'.repeat(size - 300)}{{{${'A'.repeat(50)}|${'f'.repeat(199)} }}`,
      `${'x'.repeat(size - 7 * SYNTAX_LIMITS.tags)}${'{{{A}}}'.repeat(SYNTAX_LIMITS.tags)}`,
    ];
    for (const source of hostile) {
      const started = performance.now();
      const result = parseTemplate(source);
      if (result.ok && result.parsed.keys.length) {
        // Every tag a 100 KB value: the render stops at a 3 MB budget instead of producing 200 MB.
        const budget = { remaining: 3_000_000 };
        const given = new Map(result.parsed.keys.map((key) => [key, { text: 'v'.repeat(100_000) }]));
        expect(() => renderTemplate(result.parsed, given, { escape: true, budget })).toThrow(RenderBudgetExceeded);
      } else if (result.ok) {
        expect(renderTemplate(result.parsed, values({}), { escape: true, budget: big() })).toBe(source);
      }
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });
});
