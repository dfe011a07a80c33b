// The local SMTP server's spool: a message is written to its own file in the data directory and fsynced (file
// and folder) before the server answers 250, then handed to receiveEmail and removed once stored. A crash, a
// kill -9 or a failing store leaves the file, and the next start (or the next retry) hands it over again;
// receiveEmail is idempotent on the entry id, so a message handed over twice is stored once.
// With SF_DATA_DIR=:memory: entries live in memory (nothing survives the process anyway).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
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

export interface Spool {
  begin(envelope: SpooledEnvelope): SpoolWriter;
  /** The ids of every committed entry not yet removed, oldest first (a start's replay). */
  pending(): string[];
  /** The entry (read when it is handled, so one message at a time is in memory); null when unreadable. */
  load(id: string): SpoolEntry | null;
  remove(id: string): void;
  /** Entries committed and not removed. */
  size(): number;
}

const SUFFIX = '.msg';
const ENTRY_ID = /^in_[0-9a-z]{26}$/;

export class DiskSpool implements Spool {
  private readonly live = new Set<string>();

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(dir)) {
      // A message whose DATA never completed was never answered 250: its partial file goes.
      if (!name.endsWith(SUFFIX)) rmSync(join(dir, name), { force: true });
      else if (ENTRY_ID.test(name.slice(0, -SUFFIX.length))) this.live.add(name.slice(0, -SUFFIX.length));
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
        const dirFd = openSync(this.dir, 'r');
        try {
          fsyncSync(dirFd);
        } finally {
          closeSync(dirFd);
        }
        this.live.add(id);
        return id;
      },
      discard: () => {
        close();
        rmSync(temporary, { force: true });
      },
    };
  }

  pending(): string[] {
    return [...this.live].sort();
  }

  remove(id: string): void {
    this.live.delete(id);
    rmSync(join(this.dir, `${id}${SUFFIX}`), { force: true });
  }

  size(): number {
    return this.live.size;
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
  }

  size(): number {
    return this.entries.size;
  }
}

export function localSpool(dataDir: string): Spool {
  return dataDir === ':memory:' ? new MemorySpool() : new DiskSpool(join(dataDir, 'inbound-spool'));
}

/** writeSync may write less than asked: loop. */
function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}
