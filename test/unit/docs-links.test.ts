// The README and the guides in docs/ hold together on a fresh clone: every relative link and anchor resolves,
// nothing points outside the repository, and the README stays a one-screen start with the two set-up commands.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, markdownLinks, slugOf } from '../support/markdown-links';

const root = resolve(__dirname, '../..');
const readme = join(root, 'README.md');
const docs = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => join(root, 'docs', name));

describe('markdown link checker', () => {
  it('makes GitHub-style heading anchors', () => {
    expect(slugOf('Recovery jobs')).toBe('recovery-jobs');
    expect(slugOf('API (`bench:api`)')).toBe('api-benchapi');
    expect(slugOf('Decisions where the spec is open')).toBe('decisions-where-the-spec-is-open');
    expect(slugOf('Past 10,000 API keys')).toBe('past-10000-api-keys');
    expect(slugOf('Sends: one outcome per recipient')).toBe('sends-one-outcome-per-recipient');
    expect([...anchorsOf('# A\n## Figures\n```\n# not a heading\n```\n## Figures\n')]).toEqual([
      'a',
      'figures',
      'figures-1',
    ]);
  });

  it('finds links and images outside code only', () => {
    const text = '[a](x.md) ![b](img.png "t")\n`[c](no.md)`\n```\n[d](no.md)\n```\n[e](y.md#z) [f](https://e.com)';
    expect(markdownLinks(text).map((link) => link.target)).toEqual(['x.md', 'img.png', 'y.md#z', 'https://e.com']);
  });

  it('reports a missing file, a missing anchor and a link out of the repository', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-links-'));
    writeFileSync(join(dir, 'guide.md'), '# Guide\n## Retries\n');
    writeFileSync(
      join(dir, 'README.md'),
      '[ok](guide.md#retries) [ok](#top) [gone](missing.md) [anchor](guide.md#nope) [out](../shared/DESIGN.md)\n# Top\n',
    );
    expect(brokenLinks(join(dir, 'README.md'), dir)).toEqual([
      'README.md:1 (missing.md): no such file',
      'README.md:1 (guide.md#nope): no heading with the anchor #nope',
      'README.md:1 (../shared/DESIGN.md): points outside the repository',
    ]);
  });
});

describe('README.md and docs/*.md', () => {
  it('have no broken relative link or anchor, and none that leaves the repository', () => {
    expect([readme, ...docs].flatMap((file) => brokenLinks(file, root))).toEqual([]);
  });

  it('name nothing a clone does not have (the workspace folder next to the repository)', () => {
    const mentions = [readme, ...docs].filter((file) => readFileSync(file, 'utf8').includes('../shared'));
    expect(mentions).toEqual([]);
  });

  it('keep the README to one screen: at most 200 lines', () => {
    expect(readFileSync(readme, 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(200);
  });

  it('are what code and pages cite: each (docs/<guide>.md, "Heading") is a real heading; no README heading', () => {
    const sources = ['lambdas', 'lib', 'bin', 'bench', 'test'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((name) => /\.(ts|mjs)$/.test(name))
        .map((name) => join(root, dir, name)),
    );
    const problems = sources.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      const where = relative(root, file);
      const citations = [...text.matchAll(/(docs\/[a-z-]+\.md),\s*"([^"]+)"/g)].flatMap(
        ([, guide = '', heading = '']) =>
          existsSync(join(root, guide)) && anchorsOf(readFileSync(join(root, guide), 'utf8')).has(slugOf(heading))
            ? []
            : [`${where}: ${guide}, "${heading}"`],
      );
      const readmeHeadings = [...text.matchAll(/README(?:'s)?,?\s*"([^"]+)"/g)].map(([cited]) => `${where}: ${cited}`);
      return [...citations, ...readmeHeadings];
    });
    expect(problems).toEqual([]);
  });

  it('open the README with the two set-up commands, right after the title', () => {
    const text = readFileSync(readme, 'utf8');
    const [title, ...rest] = text.split('\n');
    expect(title).toBe('# Sendflow');
    const start = rest.findIndex((line) => line.trim() !== '');
    expect(rest[start]).toBe('```sh setup'); // marked for the doc-test (test/integration/guides.test.ts): not run by it
    const block = rest.slice(start + 1, rest.indexOf('```', start + 1));
    expect(block.map((line) => line.split('#')[0]?.trim())).toEqual(['npm ci && npm start', 'npm ci && npm test']);
  });
});
