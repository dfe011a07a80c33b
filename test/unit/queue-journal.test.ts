// The local queues' journal (lambdas/adapters/in-process/journal.ts) and a journaled InProcessQueue: what was
// sent and not acked comes back after a reopen (delays, receive counts and dead letters included), a torn last
// line is ignored, and the file stays near the size of what is live.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type JournalMessage, QueueJournal } from '../../lambdas/adapters/in-process/journal';
import { InProcessQueue } from '../../lambdas/adapters/in-process/queue';

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendflow-journal-'));
  path = join(dir, 'q.journal');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const message = (id: string, body = `body-${id}`, visibleAt = 0): JournalMessage => ({
  id,
  body,
  sentAt: 1,
  visibleAt,
  receiveCount: 0,
});

describe('QueueJournal', () => {
  it('replays what was sent and not acked, with requeues and dead letters, after a reopen', () => {
    // Arrange
    const journal = QueueJournal.open(path);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((id) => message(id));
    journal.sent([a, b, c, d] as JournalMessage[]);
    journal.acked(['a']);
    Object.assign(b as JournalMessage, { receiveCount: 2, visibleAt: 5_000 });
    journal.requeued(b as JournalMessage);
    journal.buried(c as JournalMessage);
    // No close(): as after kill -9.

    // Act
    const reopened = QueueJournal.open(path);

    // Assert
    expect(reopened.messages().map((m) => [m.id, m.receiveCount, m.visibleAt])).toEqual([
      ['b', 2, 5_000],
      ['d', 0, 0],
    ]);
    expect(reopened.deadLetters().map((m) => m.id)).toEqual(['c']);
    expect(reopened.messages().find((m) => m.id === 'd')?.body).toBe('body-d');
  });

  it('ignores a line torn by a crash mid-write', () => {
    const journal = QueueJournal.open(path);
    journal.sent([message('a')]);
    appendFileSync(path, '{"s":"b","b":"half');

    const reopened = QueueJournal.open(path);

    expect(reopened.messages().map((m) => m.id)).toEqual(['a']);
  });

  it('writes nothing after close (a handler finishing during shutdown leaves its message unacked)', () => {
    const journal = QueueJournal.open(path);
    journal.sent([message('a')]);
    journal.close();
    journal.acked(['a']);

    expect(
      QueueJournal.open(path)
        .messages()
        .map((m) => m.id),
    ).toEqual(['a']);
  });

  it('stays near the size of what is live however much passes through it', () => {
    const journal = QueueJournal.open(path);
    const body = 'x'.repeat(1_000);
    for (let i = 0; i < 10_000; i += 1) {
      journal.sent([message(`m${i}`, body)]);
      if (i >= 100) journal.acked([`m${i - 100}`]); // about 100 live at any time: ~110 KB
    }

    const size = statSync(path).size;

    expect(QueueJournal.open(path).messages()).toHaveLength(100);
    // Ten million bytes went through; the file is rewritten at 2x live past a 1 MiB floor.
    expect(size).toBeLessThan(1.2 * 2 ** 20);
    expect(readFileSync(path, 'utf8').split('\n').length).toBeLessThan(1_500);
  });
});

describe('InProcessQueue with a journal', () => {
  const options = { batchSize: 10, visibilityTimeoutMs: 30, maxReceiveCount: 2, concurrency: 2 };

  it('hands out after a restart what was ready, delayed or in flight when the last one stopped', async () => {
    // Arrange: one message in flight (its handler never ends), one ready, one delayed.
    const first = new InProcessQueue('q', { ...options, concurrency: 1, journal: QueueJournal.open(path) });
    first.consume(() => new Promise(() => {}));
    first.send(['in-flight']);
    first.send(['ready']);
    first.send(['delayed'], 0.05);
    await first.stop(20);

    // Act
    const received: string[] = [];
    const second = new InProcessQueue('q', { ...options, journal: QueueJournal.open(path) });
    second.consume(async (event: SQSEvent) => {
      received.push(...event.Records.map((r) => r.body));
      return undefined;
    });
    await second.idle();
    await second.stop();

    // Assert
    expect(received.sort()).toEqual(['delayed', 'in-flight', 'ready']);
    expect(QueueJournal.open(path).messages()).toEqual([]);
  });

  it('keeps dead letters across a restart and never hands them out again', async () => {
    const first = new InProcessQueue('q', { ...options, journal: QueueJournal.open(path) });
    first.consume(async () => {
      throw new Error('poison');
    });
    first.send(['poison']);
    while (first.deadLetters.length === 0) await new Promise((r) => setTimeout(r, 5));
    await first.stop();

    const handed: string[] = [];
    const second = new InProcessQueue('q', { ...options, journal: QueueJournal.open(path) });
    second.consume(async (event: SQSEvent) => {
      handed.push(...event.Records.map((r) => r.body));
      return undefined;
    });
    await second.idle();
    await second.stop();

    expect(second.deadLetters.map((m) => [m.body, m.receiveCount])).toEqual([['poison', 2]]);
    expect(handed).toEqual([]);
  });
});
