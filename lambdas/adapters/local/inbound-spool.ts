// The local SMTP server's spool: a message is written to its own file in the data directory and fsynced (file
// and folder) before the server answers 250, then handed to receiveEmail and removed once stored. A crash, a
// kill -9 or a failing store leaves the file, and the next start (or the next retry) hands it over again;
// receiveEmail is idempotent on the entry id, so a message handed over twice is stored once.
// Every failed try is counted beside the entry (<id>.tries, so the count survives a restart); an entry that
// failed too often is moved aside to the dead letters (<data dir>/inbound-dead/: the message and <id>.json with
// its reason), where the admin CLI lists it and nothing retries it.
// With SF_DATA_DIR=:memory: entries live in memory (nothing survives the process anyway).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import * as z from 'zod';
import { timeOrderedId } from '../../domain/ids';

/** The envelope of a spooled message, as the file's first line. */
export interface SpooledEnvelope {
  readonly mailFrom: string;
  readonly recipients: readonly string[];
  readonly receivedAt: string;
}

export interface SpoolEntry extends SpooledEnvelope {
  /** Stable across restarts: receiveEmail's sourceId. */
  readonly id: string;
  readonly raw: Uint8Array;
}

/** A message being written: chunks go to disk (or memory) as they arrive; commit makes it durable. */
export interface SpoolWriter {
  write(chunk: Uint8Array): void;
  /** Durable once it returns (the server may answer 250): the entry's id. */
  commit(): string;
  /** Drops what was written (an oversized or broken message). */
  discard(): void;
}

/** An entry that failed too often, moved aside with why: the operator's to look at (and to retry). */
export interface DeadLetter extends SpooledEnvelope {
  readonly id: string;
  /** The message's size. */
  readonly bytes: number;
  /** Tries made. */
  readonly attempts: number;
  /** The last try's error. */
  readonly reason: string;
  /** When it was moved aside (ISO 8601). */
  readonly deadAt: string;
}

export interface Spool {
  begin(envelope: SpooledEnvelope): SpoolWriter;
  /** The ids of every committed entry not yet removed, oldest first (a start's replay). */
  pending(): string[];
  /** The entry (read when it is handled, so one message at a time is in memory); null when unreadable. */
  load(id: string): SpoolEntry | null;
  remove(id: string): void;
  /** Entries committed and not removed. */
  size(): number;
  /** Counts one more failed try of the entry (kept across restarts where the spool is); returns the count. */
  noteFailure(id: string): number;
  /** Moves the entry out of the spool into the dead letters (it is never tried again). */
  deadLetter(letter: DeadLetter): void;
  /** The dead letters, oldest first. */
  deadLetters(): DeadLetter[];
}

const SUFFIX = '.msg';
const TRIES = '.tries';
const LETTER = '.json';
const ENTRY_ID = /^in_[0-9a-z]{26}$/;

export class DiskSpool implements Spool {
  /** `deadDir`: where dead letters go (default: inbound-dead beside the spool). */
  constructor(
    private readonly dir: string,
    private readonly deadDir = join(dirname(dir), 'inbound-dead'),
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const live = new Set(this.pending());
    for (const name of readdirSync(dir)) {
      // A message whose DATA never completed was never answered 250: its partial file goes; so does the count
      // of tries of an entry no longer there.
      if (name.endsWith(SUFFIX)) continue;
      if (name.endsWith(TRIES) && live.has(name.slice(0, -TRIES.length))) continue;
      rmSync(join(dir, name), { force: true });
    }
  }

  begin(envelope: SpooledEnvelope): SpoolWriter {
    const id = timeOrderedId('in', Date.now(), randomBytes);
    const temporary = join(this.dir, `${id}.tmp`);
    const fd = openSync(temporary, 'w', 0o600);
    let open = true;
    const close = () => {
      if (open) closeSync(fd);
      open = false;
    };
    writeAll(fd, Buffer.from(`${JSON.stringify(envelope)}\n`));
    return {
      write: (chunk) => writeAll(fd, chunk),
      commit: () => {
        fsyncSync(fd);
        close();
        const path = join(this.dir, `${id}${SUFFIX}`);
        renameSync(temporary, path);
        // The rename is durable only once the folder is.
        syncDir(this.dir);
        return id;
      },
      discard: () => {
        close();
        rmSync(temporary, { force: true });
      },
    };
  }

  /** Read from the folder each time: a dead letter put back by the admin CLI is found without a restart. */
  pending(): string[] {
    return readdirSync(this.dir)
      .filter((name) => name.endsWith(SUFFIX) && ENTRY_ID.test(name.slice(0, -SUFFIX.length)))
      .map((name) => name.slice(0, -SUFFIX.length))
      .sort();
  }

  remove(id: string): void {
    rmSync(join(this.dir, `${id}${SUFFIX}`), { force: true });
    rmSync(join(this.dir, `${id}${TRIES}`), { force: true });
  }

  size(): number {
    return this.pending().length;
  }

  noteFailure(id: string): number {
    const file = join(this.dir, `${id}${TRIES}`);
    let tries = 0;
    try {
      tries = Number.parseInt(readFileSync(file, 'utf8'), 10) || 0;
    } catch {
      // First failure.
    }
    writeFileSync(file, String(tries + 1), { mode: 0o600 });
    return tries + 1;
  }

  deadLetter(letter: DeadLetter): void {
    mkdirSync(this.deadDir, { recursive: true, mode: 0o700 });
    // The reason first, then the message: a crash in between leaves the entry spooled (tried again), never a
    // message aside without its reason.
    writeDurably(join(this.deadDir, `${letter.id}${LETTER}`), `${JSON.stringify(letter)}\n`);
    renameSync(join(this.dir, `${letter.id}${SUFFIX}`), join(this.deadDir, `${letter.id}${SUFFIX}`));
    syncDir(this.deadDir);
    rmSync(join(this.dir, `${letter.id}${TRIES}`), { force: true });
  }

  deadLetters(): DeadLetter[] {
    return readDeadLetters(this.deadDir);
  }

  load(id: string): SpoolEntry | null {
    const bytes = readFileSync(join(this.dir, `${id}${SUFFIX}`));
    const newline = bytes.indexOf(0x0a);
    try {
      const envelope = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as SpooledEnvelope;
      return { id, ...envelope, raw: bytes.subarray(newline + 1) };
    } catch {
      return null; // not ours: left where it is
    }
  }
}

/** SF_DATA_DIR=:memory: entries are kept until stored, as long as the process. */
export class MemorySpool implements Spool {
  private readonly entries = new Map<string, SpoolEntry>();
  private readonly tries = new Map<string, number>();
  private readonly dead: DeadLetter[] = [];

  begin(envelope: SpooledEnvelope): SpoolWriter {
    const chunks: Uint8Array[] = [];
    return {
      write: (chunk) => {
        chunks.push(chunk);
      },
      commit: () => {
        const entry = { id: timeOrderedId('in', Date.now(), randomBytes), ...envelope, raw: Buffer.concat(chunks) };
        this.entries.set(entry.id, entry);
        return entry.id;
      },
      discard: () => {
        chunks.length = 0;
      },
    };
  }

  pending(): string[] {
    return [...this.entries.keys()];
  }

  load(id: string): SpoolEntry | null {
    return this.entries.get(id) ?? null;
  }

  remove(id: string): void {
    this.entries.delete(id);
    this.tries.delete(id);
  }

  size(): number {
    return this.entries.size;
  }

  noteFailure(id: string): number {
    const tries = (this.tries.get(id) ?? 0) + 1;
    this.tries.set(id, tries);
    return tries;
  }

  deadLetter(letter: DeadLetter): void {
    this.dead.push(letter);
    this.remove(letter.id);
  }

  deadLetters(): DeadLetter[] {
    return [...this.dead];
  }
}

export function localSpool(dataDir: string): Spool {
  return dataDir === ':memory:'
    ? new MemorySpool()
    : new DiskSpool(join(dataDir, 'inbound-spool'), inboundDeadDir(dataDir));
}

/** Where the local runtime keeps inbound dead letters (the admin CLI reads them there). */
export function inboundDeadDir(dataDir: string): string {
  return join(dataDir, 'inbound-dead');
}

/**
 * Puts a dead letter back in the spool with a fresh count of tries (`npm run admin -- retry-inbound-failure`):
 * a running runtime finds it within a minute, a stopped one at its next start. False when there is none.
 */
export function redriveDeadLetter(dataDir: string, id: string): boolean {
  if (!ENTRY_ID.test(id)) return false;
  const dead = inboundDeadDir(dataDir);
  const spool = join(dataDir, 'inbound-spool');
  if (!existsSync(join(dead, `${id}${SUFFIX}`))) return false;
  mkdirSync(spool, { recursive: true, mode: 0o700 });
  renameSync(join(dead, `${id}${SUFFIX}`), join(spool, `${id}${SUFFIX}`));
  syncDir(spool);
  rmSync(join(dead, `${id}${LETTER}`), { force: true });
  return true;
}

/** The dead letters in `dir`, oldest first; a reason file that does not read is shown as such, not skipped. */
export function readDeadLetters(dir: string): DeadLetter[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith(LETTER) && ENTRY_ID.test(name.slice(0, -LETTER.length)))
    .sort()
    .map((name) => {
      const id = name.slice(0, -LETTER.length);
      try {
        return deadLetterSchema(JSON.parse(readFileSync(join(dir, name), 'utf8')), id);
      } catch {
        const unreadable = { mailFrom: '', recipients: [], receivedAt: '', bytes: 0, attempts: 0, deadAt: '' };
        return { id, ...unreadable, reason: `its reason file ${name} does not read` };
      }
    });
}

/** A dead letter as written (zod at the boundary: a hand-edited file cannot feed the CLI anything else). */
const deadLetterFile = z.object({
  mailFrom: z.string(),
  recipients: z.array(z.string()),
  receivedAt: z.string(),
  bytes: z.number().int().min(0),
  attempts: z.number().int().min(0),
  reason: z.string(),
  deadAt: z.string(),
});

function deadLetterSchema(value: unknown, id: string): DeadLetter {
  return { id, ...deadLetterFile.parse(value) };
}

function writeDurably(path: string, text: string): void {
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeAll(fd, Buffer.from(text));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** writeSync may write less than asked: loop. */
function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}
