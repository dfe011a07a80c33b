// The local queues' write-ahead journal: one append-only file per queue in the data directory. A message is
// written (synchronously, so into the OS before send() returns) when it is sent, and an ack, a requeue or a
// move to the dead letters is appended as it happens. kill -9 cannot lose a written line: the file is the
// kernel's once write() returns. On open the journal is replayed into the live set and rewritten compactly;
// it is rewritten again whenever what it holds is more than twice what is live, so it stays near live size.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';

/** A message as the queue keeps it; the journal keeps the live ones by reference. */
export interface JournalMessage {
  readonly id: string;
  readonly body: string;
  readonly sentAt: number;
  /** Epoch ms from which it may be received (a delay, or a visibility time-out after a failure). */
  visibleAt: number;
  receiveCount: number;
}

/** One line of the journal. */
type Entry =
  | { s: string; b: string; t: number; v: number; n: number; dead?: 1 }
  | { a: string }
  | { r: string; v: number; n: number }
  | { d: string; n: number };

/** Rewrite when the file is this much larger than its live content (and past the floor). */
const COMPACT_RATIO = 2;
const COMPACT_FLOOR_BYTES = 1 << 20;

export class QueueJournal {
  private fd: number;
  private readonly live = new Map<string, JournalMessage>();
  private readonly dead = new Map<string, JournalMessage>();
  /** Bytes of each kept message's line, to know what a rewrite would keep. */
  private readonly sizes = new Map<string, number>();
  private fileBytes = 0;
  private keptBytes = 0;
  private closed = false;

  private constructor(private readonly path: string) {
    this.replay();
    this.fd = this.rewrite();
  }

  /** Opens (or creates) the journal at `path` and replays it. */
  static open(path: string): QueueJournal {
    return new QueueJournal(path);
  }

  /** What was live when the journal was opened (and since): ready, delayed, or in flight at a crash. */
  messages(): JournalMessage[] {
    return [...this.live.values()];
  }

  deadLetters(): JournalMessage[] {
    return [...this.dead.values()];
  }

  sent(messages: readonly JournalMessage[]): void {
    const lines = messages.map((message) => {
      const text = line(sendEntry(message));
      this.live.set(message.id, message);
      this.keep(message.id, text);
      return text;
    });
    this.write(lines);
  }

  acked(ids: readonly string[]): void {
    const gone = ids.filter((id) => this.live.delete(id));
    for (const id of gone) {
      this.keptBytes -= this.sizes.get(id) ?? 0;
      this.sizes.delete(id);
    }
    this.append(gone.map((id) => ({ a: id })));
  }

  /** A failed receive: visible again at `message.visibleAt`, with its receive count. */
  requeued(message: JournalMessage): void {
    this.append([{ r: message.id, v: message.visibleAt, n: message.receiveCount }]);
  }

  /** Moved to the dead letters: kept, never handed out again. */
  buried(message: JournalMessage): void {
    this.live.delete(message.id);
    this.dead.set(message.id, message);
    this.append([{ d: message.id, n: message.receiveCount }]);
  }

  /** No more writes; what is not acked stays in the file for the next open. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private append(entries: readonly Entry[]): void {
    this.write(entries.map(line));
  }

  private write(lines: readonly string[]): void {
    // After close (a handler finishing during shutdown): the work stays unacked and is redelivered.
    if (this.closed || lines.length === 0) return;
    const bytes = Buffer.from(lines.join(''));
    writeAll(this.fd, bytes);
    this.fileBytes += bytes.length;
    if (this.fileBytes > Math.max(COMPACT_FLOOR_BYTES, this.keptBytes * COMPACT_RATIO)) this.compact();
  }

  private keep(id: string, text: string): void {
    const bytes = Buffer.byteLength(text);
    this.keptBytes += bytes - (this.sizes.get(id) ?? 0);
    this.sizes.set(id, bytes);
  }

  /** The old descriptor is closed only once the new file is in place and open: a failed rewrite keeps it. */
  private compact(): void {
    const old = this.fd;
    this.fd = this.rewrite();
    closeSync(old);
  }

  /** Writes the live and dead messages to a new file, then renames it over the journal; returns its fd. */
  private rewrite(): number {
    const lines = [
      ...[...this.live.values()].map((m) => line(sendEntry(m))),
      ...[...this.dead.values()].map((m) => line({ ...sendEntry(m), dead: 1 })),
    ];
    const bytes = Buffer.from(lines.join(''));
    const temporary = `${this.path}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeAll(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
    this.fileBytes = this.keptBytes = bytes.length;
    return openSync(this.path, 'a', 0o600);
  }

  private replay(): void {
    if (!existsSync(this.path)) return;
    const lines = readFileSync(this.path, 'utf8').split('\n');
    for (const line of lines) {
      if (!line) continue;
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        continue; // a line torn by a crash mid-write: its send() never returned
      }
      this.apply(entry);
    }
  }

  private apply(entry: Entry): void {
    if ('s' in entry) {
      const message = { id: entry.s, body: entry.b, sentAt: entry.t, visibleAt: entry.v, receiveCount: entry.n };
      (entry.dead ? this.dead : this.live).set(message.id, message);
      this.keep(message.id, line(entry));
    } else if ('a' in entry) {
      this.live.delete(entry.a);
      this.sizes.delete(entry.a);
    } else if ('r' in entry) {
      const message = this.live.get(entry.r);
      if (message) Object.assign(message, { visibleAt: entry.v, receiveCount: entry.n });
    } else if ('d' in entry) {
      const message = this.live.get(entry.d);
      this.live.delete(entry.d);
      if (message) this.dead.set(message.id, Object.assign(message, { receiveCount: entry.n }));
    }
  }
}

const line = (entry: Entry) => `${JSON.stringify(entry)}\n`;

/** writeSync may write less than asked (a full disk, a signal): loop, so lines are never torn mid-file. */
function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}

function sendEntry(m: JournalMessage): Entry {
  return { s: m.id, b: m.body, t: m.sentAt, v: m.visibleAt, n: m.receiveCount };
}
