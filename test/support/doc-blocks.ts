// The shell blocks of the README and the guides, as the doc-test (test/integration/guides.test.ts) runs them.
// A fenced block's info string says what it is:
//   ```sh          a reader runs it as written: the doc-test runs it, in order, in one shell state per guide
//   ```sh server   a reader starts it in another terminal and leaves it running: started in the background
//   ```sh aws      needs an AWS account (a deployed stage): listed, never run
//   ```sh bench    a benchmark (minutes each): its npm script (or bench file) must exist; not run
//   ```sh setup    installs or runs the whole suite (npm ci, npm test): what CI itself does; listed, not run
//   ```sh incident needs what an incident left behind (a dead inbound message, a paused account): listed, not run
// Inside a runnable block, `export NAME=prefix_…` is the value a reader copies from what was printed above (the
// newest `prefix_…` token printed so far); any other `…` outside a comment is a block nobody can run as written.

export type BlockKind = 'run' | 'server' | 'aws' | 'bench' | 'setup' | 'incident';

export interface ShellBlock {
  readonly file: string;
  /** The line of the opening fence (1-based). */
  readonly line: number;
  readonly kind: BlockKind;
  readonly text: string;
}

const KINDS: Readonly<Record<string, BlockKind>> = {
  '': 'run',
  server: 'server',
  aws: 'aws',
  bench: 'bench',
  setup: 'setup',
  incident: 'incident',
};

/** The ```sh blocks of a markdown file, in order. An unknown word after `sh` is an error, not a silent skip. */
export function shellBlocks(file: string, markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const end = lines.findIndex((text, j) => j > i && text.startsWith('```'));
    const close = end < 0 ? lines.length : end;
    if (open[1] === 'sh' || open[1] === 'bash') {
      const word = (open[2] ?? '').trim();
      const kind = KINDS[word];
      if (!kind) throw new Error(`${file}:${i + 1}: unknown shell block kind "${word}"`);
      blocks.push({ file, line: i + 1, kind, text: lines.slice(i + 1, close).join('\n') });
    }
    i = close;
  }
  return blocks;
}

/** `export NAME=prefix_…`: the value a reader copies from the output above. */
const COPIED = /^(\s*export\s+[A-Z_][A-Z0-9_]*=)((?:[a-z][a-z0-9]*_)+)…(?=\s|$)/gm;

/** The code of a line, without its comment (a `#` that starts a word, outside quotes: good enough for guides). */
function withoutComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) return line.slice(0, i);
  }
  return line;
}

/**
 * Commands a doc-test must never run for a reader, whatever the block says: they install into (and through a
 * symlinked node_modules, empty) the checkout, or run the whole suite. A runnable block holding one is marked
 * `setup`; one that reaches AWS (`--aws`, the aws CLI, cdk deploy) is marked `aws`.
 */
export function forbidden(text: string): string | undefined {
  const code = text.split('\n').map(withoutComment).join('\n');
  return /\bnpm\s+(?:ci|install|i|test|run\s+(?:test|ci))\b|\bnpx\s+cdk\b|(?:^|[\s;&|(])aws\s|--aws\b/.exec(code)?.[0];
}

/** A block cut before each line that copies a printed value: a reader runs what is above, then copies. */
export function segments(text: string): string[] {
  const parts: string[][] = [[]];
  for (const line of text.split('\n')) {
    COPIED.lastIndex = 0;
    if (COPIED.test(line) && parts.at(-1)?.some((l) => l.trim() && !l.trim().startsWith('#'))) parts.push([]);
    parts.at(-1)?.push(line);
  }
  COPIED.lastIndex = 0;
  return parts.map((lines) => lines.join('\n'));
}

/**
 * The block's text with each copied value pasted from `printed` (the newest token with that prefix), or the
 * reasons it cannot run as written (a placeholder nothing printed, an ellipsis in a command).
 */
export function pasteCopied(text: string, printed: string): { script: string; problems: string[] } {
  const problems: string[] = [];
  const script = text.replace(COPIED, (_all, head: string, prefix: string) => {
    const tokens = printed.match(new RegExp(`\\b${prefix}[A-Za-z0-9_+/=-]{6,}`, 'g')) ?? [];
    const value = tokens.at(-1);
    if (!value) problems.push(`nothing printed so far to copy for ${head}${prefix}…`);
    return `${head}${value ?? ''}`;
  });
  for (const line of script.split('\n')) {
    if (withoutComment(line).includes('…')) problems.push(`not runnable as written: ${line.trim()}`);
  }
  return { script, problems };
}
