// Where JSON text breaks and why, in plain words (`line 3, column 9: expected a value, found x`). JSON.parse says
// only "Unexpected token" (its wording, and whether it gives a position, change with the V8 version), so once it
// has refused a body this scanner walks the text again: one pass, no recursion (an explicit stack), linear.

export interface JsonSyntaxProblem {
  readonly line: number;
  readonly column: number;
  /** What is wrong there: "expected `,` or `}` after a value in an object, found `x`". */
  readonly problem: string;
}

type Container = 'object' | 'array';
type Expect = 'value' | 'key-or-end' | 'key' | 'colon' | 'comma-or-end' | 'value-or-end' | 'end';

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/** The first syntax error of `text`, or null when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxProblem | null {
  const stack: Container[] = [];
  let expect: Expect = 'value';
  let afterComma = false;
  let i = 0;
  const fail = (at: number, problem: string) => ({ ...position(text, at), problem });
  const afterValue = (): Expect => (stack.length ? 'comma-or-end' : 'end');

  while (true) {
    while (i < text.length && WHITESPACE.has(text.charCodeAt(i))) i++;
    if (i >= text.length) {
      if (expect === 'end') return null;
      if (!stack.length && expect === 'value' && text.trim() === '') return fail(i, 'the body is empty.');
      return fail(i, `the body ends too early: expected ${wanted(expect, stack)}.`);
    }
    const char = text[i] as string;
    switch (expect) {
      case 'end':
        return fail(i, `expected the end of the body after the JSON value, found ${shown(text, i)}.`);
      case 'colon':
        if (char !== ':') return fail(i, `expected \`:\` after the field name, found ${shown(text, i)}.`);
        i++;
        expect = 'value';
        continue;
      case 'comma-or-end': {
        const top = stack[stack.length - 1];
        const close = top === 'object' ? '}' : ']';
        if (char === ',') {
          i++;
          afterComma = true;
          expect = top === 'object' ? 'key' : 'value';
          continue;
        }
        if (char === close) {
          i++;
          stack.pop();
          expect = afterValue();
          continue;
        }
        return fail(i, `expected ${wanted(expect, stack)}, found ${shown(text, i)}.`);
      }
      case 'key-or-end':
      case 'key':
        if (char === '}' && expect === 'key-or-end') {
          i++;
          stack.pop();
          expect = afterValue();
          continue;
        }
        if (char === '}' && afterComma) return fail(i, 'a comma before `}` is not allowed (nothing follows it).');
        if (char !== '"')
          return fail(
            i,
            `expected a field name in double quotes${expect === 'key-or-end' ? ' or `}`' : ''}, found ${shown(text, i)}.`,
          );
        {
          const end = scanString(text, i);
          if (typeof end !== 'number') return fail(end.at, end.problem);
          i = end;
        }
        expect = 'colon';
        afterComma = false;
        continue;
      case 'value-or-end':
      case 'value': {
        if (char === ']' && (expect === 'value-or-end' || (afterComma && stack[stack.length - 1] === 'array'))) {
          if (afterComma) return fail(i, 'a comma before `]` is not allowed (nothing follows it).');
          i++;
          stack.pop();
          expect = afterValue();
          continue;
        }
        afterComma = false;
        if (char === '{') {
          stack.push('object');
          i++;
          expect = 'key-or-end';
          continue;
        }
        if (char === '[') {
          stack.push('array');
          i++;
          expect = 'value-or-end';
          continue;
        }
        if (char === '"') {
          const end = scanString(text, i);
          if (typeof end !== 'number') return fail(end.at, end.problem);
          i = end;
          expect = afterValue();
          continue;
        }
        if (char === '-' || (char >= '0' && char <= '9')) {
          NUMBER.lastIndex = i;
          const match = NUMBER.exec(text);
          if (!match) return fail(i, `a number is malformed here: ${shown(text, i)}.`);
          const next = text[i + match[0].length];
          if (next !== undefined && /[0-9.eE+-]/.test(next))
            return fail(i, `a number is malformed here: ${shownRun(text, i)}.`);
          i += match[0].length;
          expect = afterValue();
          continue;
        }
        const literal = ['true', 'false', 'null'].find((word) => text.startsWith(word, i));
        if (literal) {
          i += literal.length;
          expect = afterValue();
          continue;
        }
        return fail(i, `expected ${wanted(expect, stack)}, found ${shown(text, i)}.`);
      }
    }
  }
}

/** A string from its opening quote: the index after its closing quote, or where and why it is broken. */
function scanString(text: string, start: number): number | { at: number; problem: string } {
  let i = start + 1;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code < 0x20)
      return {
        at: i,
        problem: `a string holds a raw control character (${code === 0x0a ? 'a line break' : `U+${code.toString(16).padStart(4, '0').toUpperCase()}`}): write it escaped, e.g. \\n.`,
      };
    if (code === 0x5c) {
      const next = text[i + 1];
      if (next === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)))
          return { at: i, problem: 'a \\u escape needs four hexadecimal digits, e.g. \\u00e9.' };
        i += 6;
        continue;
      }
      if (next === undefined || !ESCAPES.has(next))
        return {
          at: i,
          problem: `\`\\${next ?? ''}\` is not an escape JSON has (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX).`,
        };
      i += 2;
      continue;
    }
    i++;
  }
  return { at: start, problem: 'a string opened here is never closed (a `"` is missing).' };
}

function wanted(expect: Expect, stack: readonly Container[]): string {
  const top = stack[stack.length - 1];
  switch (expect) {
    case 'comma-or-end':
      return top === 'object' ? '`,` or `}` after a value in an object' : '`,` or `]` after a value in a list';
    case 'key':
    case 'key-or-end':
      return 'a field name in double quotes';
    case 'colon':
      return '`:` after the field name';
    case 'value-or-end':
      return 'a value or `]`';
    default:
      return 'a value (a string in double quotes, a number, an object, a list, true, false or null)';
  }
}

/** The character at `at` as a reader sees it. */
function shown(text: string, at: number): string {
  const code = text.codePointAt(at) ?? 0;
  if (code === 0xfeff) return 'a byte order mark (U+FEFF)';
  if (code < 0x20 || code === 0x7f)
    return `the control character U+${code.toString(16).padStart(4, '0').toUpperCase()}`;
  if (code === 0x60) return '"`"';
  return `\`${String.fromCodePoint(code)}\``;
}

/** A run of number-like characters from `at`, quoted (at most 20). */
function shownRun(text: string, at: number): string {
  const run = /[0-9.eE+-]{1,20}/y;
  run.lastIndex = at;
  return `\`${run.exec(text)?.[0] ?? text[at]}\``;
}

/** 1-based line and column (in characters) of `at`. */
function position(text: string, at: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < at && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  let column = 1;
  for (let i = lineStart; i < at && i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xdc00 || code > 0xdfff) column++; // a surrogate pair is one character
  }
  return { line, column };
}
