// Relative links of markdown files, and the GitHub-style heading anchors they may point at (docs-links test).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';

export interface MarkdownLink {
  line: number;
  target: string;
}

/** The markdown without fenced code blocks (their lines blanked, so line numbers stay) and inline code spans. */
const withoutCode = (text: string): string[] => {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const opener = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence === null && opener) {
      fence = opener;
      return '';
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence)) fence = null;
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, '');
  });
};

/** Every inline link and image `[x](target)` or `![x](target "title")`, outside code. */
export const markdownLinks = (text: string): MarkdownLink[] =>
  withoutCode(text).flatMap((line, index) =>
    [...line.matchAll(/!?\[(?:[^\]]|\][^(])*\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g)].map((match) => ({
      line: index + 1,
      target: match[1] ?? '',
    })),
  );

/** Links that leave the document set: web, mail and other schemes. */
export const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** GitHub's heading anchor: the rendered text, lower-cased, punctuation dropped, spaces to hyphens. */
export const slugOf = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');

/** The anchors of a markdown file's headings, outside code; a repeated slug gets -1, -2, … as on GitHub. */
export const anchorsOf = (text: string): Set<string> => {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of rawHeadings(text)) {
    const base = slugOf(line);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
};

const rawHeadings = (text: string): string[] => {
  let fence: string | null = null;
  const headings: string[] = [];
  for (const line of text.split('\n')) {
    const opener = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence === null && opener) fence = opener;
    else if (fence !== null && line.trim().startsWith(fence)) fence = null;
    else if (fence === null) {
      const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
      if (heading !== undefined) headings.push(heading);
    }
  }
  return headings;
};

/** What is wrong with each relative link of `file` (a path), judged against the repository at `root`. */
export const brokenLinks = (file: string, root: string): string[] => {
  const text = readFileSync(file, 'utf8');
  const problems: string[] = [];
  for (const { line, target } of markdownLinks(text)) {
    if (isExternal(target)) continue;
    const where = `${relative(root, file)}:${line} (${target})`;
    const [pathPart = '', anchor] = target.split('#', 2);
    const decoded = decodeURIComponent(pathPart);
    // A leading slash is the repository's root on GitHub; anything else is relative to the file.
    const base = decoded.startsWith('/') ? root : dirname(file);
    const resolved = decoded === '' ? file : resolve(base, decoded.replace(/^\/+/, ''));
    const inside = relative(root, resolved);
    if (inside.startsWith('..') || isAbsolute(inside)) {
      problems.push(`${where}: points outside the repository`);
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor !== undefined && anchor !== '') {
      if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
        problems.push(`${where}: an anchor into something that is not a markdown file`);
      } else if (!anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
        problems.push(`${where}: no heading with the anchor #${anchor}`);
      }
    }
  }
  return problems;
};
