// docs/resend.md's SDK table covers the whole `resend` SDK this repository pins: every namespace a `Resend`
// instance has (found by walking one, not from a list kept here), and every public method of each, is named in a
// row that says what it does on Sendflow: unchanged, with a difference (named), or not offered.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../docs/resend.md', import.meta.url), 'utf8');
const sdkRoot = dirname(dirname(createRequire(import.meta.url).resolve('resend')));
const sdkVersion = (JSON.parse(readFileSync(join(sdkRoot, 'package.json'), 'utf8')) as { version: string }).version;
/** Members the SDK's own types declare `private` (helpers such as `forwardPassthrough`): not the SDK's surface. */
const privates = new Set(
  [...readFileSync(join(sdkRoot, 'dist', 'index.d.mts'), 'utf8').matchAll(/^ {2}private (?:readonly )?(\w+)/gm)].map(
    (m) => m[1] as string,
  ),
);

/** Every namespace of a Resend instance, by path (`emails.receiving.attachments`), with its public methods. */
function namespaces(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const walk = (object: object, prefix: string) => {
    for (const [name, value] of Object.entries(object)) {
      if (name === 'resend' || privates.has(name) || !value || typeof value !== 'object') continue;
      const proto = Object.getPrototypeOf(value) as object;
      if (proto === Object.prototype || Array.isArray(value)) continue;
      const methods = Object.getOwnPropertyNames(proto).filter((m) => m !== 'constructor' && !privates.has(m));
      found.set(`${prefix}${name}`, methods);
      walk(value as object, `${prefix}${name}.`);
    }
  };
  walk(new Resend('re_docs'), '');
  return found;
}

interface Row {
  readonly namespaces: string[];
  /** Methods the row names (the last name before `(` of each code span), or 'all'. */
  readonly methods: string[] | 'all';
  readonly onSendflow: string;
}

/** The rows of the table under "## The SDK, namespace by namespace". */
function tableRows(): Row[] {
  const section = doc.split(/^## The SDK, namespace by namespace$/m)[1]?.split(/^## /m)[0] ?? '';
  const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [first = '', calls = '', onSendflow = ''] = line
        .replace(/\\\|/g, '/')
        .split('|')
        .slice(1)
        .map((cell) => cell.trim());
      const methods =
        calls === 'all'
          ? ('all' as const)
          : codeSpans(calls)
              .map((span) =>
                span
                  .match(/^\.?([A-Za-z.]+)/)?.[1]
                  ?.split('.')
                  .pop(),
              )
              .filter((name): name is string => name !== undefined);
      return { namespaces: codeSpans(first), methods, onSendflow };
    });
}

describe(`docs/resend.md's SDK table (resend@${sdkVersion})`, () => {
  const rows = tableRows().filter((row) => row.namespaces.length > 0);

  it('is the version the tests drive', () => {
    expect(sdkVersion).toBe('6.38.0');
  });

  it('names every namespace of the SDK, and nothing the SDK does not have', () => {
    const sdk = namespaces();
    const named = new Set(rows.flatMap((row) => row.namespaces));
    expect([...sdk.keys()].filter((ns) => !named.has(ns))).toEqual([]);
    expect([...named].filter((ns) => !sdk.has(ns))).toEqual([]);
  });

  it('names every public method of each namespace', () => {
    const missing: string[] = [];
    for (const [ns, methods] of namespaces()) {
      const mine = rows.filter((row) => row.namespaces.includes(ns));
      if (mine.some((row) => row.methods === 'all')) continue;
      const named = new Set(mine.flatMap((row) => (row.methods === 'all' ? [] : row.methods)));
      missing.push(...methods.filter((m) => !named.has(m)).map((m) => `${ns}.${m}`));
    }
    expect(missing).toEqual([]);
  });

  it('says of each row: unchanged, with a difference (named), or not offered', () => {
    for (const row of rows) {
      expect(row.onSendflow, row.namespaces.join(', ')).toMatch(/^(unchanged|with a difference: .+|not offered)$/);
    }
  });
});
