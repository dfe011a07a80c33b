// One account's burst of sends does not hold back another's: the sends queue hands emails out round-robin by
// account (the local queue's groups; on AWS, SQS fair queues by MessageGroupId). A restart re-queues no send its
// journal already holds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueJournal } from '../../lambdas/adapters/in-process/journal';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(() => rt.stop());

const email = (to: string) => ({ from: 'a@acme.test', to, subject: 'Hi', text: 'Hello' });

describe('sends across accounts', () => {
  it("sends B's one email while most of A's burst of 1,000 still waits", async () => {
    // Arrange
    const a = await rt.newKey();
    const b = await rt.newKey();
    for (let i = 0; i < 10; i++) {
      const batch = Array.from({ length: 100 }, (_, j) => email(`a${i * 100 + j}@example.com`));
      const res = await rt.call('/emails/batch', { method: 'POST', key: a.key, body: JSON.stringify(batch) });
      expect(res.status).toBe(200);
    }

    // Act
    const res = await rt.call('/emails', { method: 'POST', key: b.key, body: JSON.stringify(email('b@example.com')) });
    const { id } = (await res.json()) as { id: string };
    let status = '';
    while (status !== 'sent' && status !== 'delivered') {
      status = ((await (await rt.call(`/emails/${id}`, { key: b.key })).json()) as { status: string }).status;
      await new Promise((r) => setTimeout(r, 5));
    }
    const waitingOfA = rt.queues.sends.depth;

    // Assert: first in, first out would have sent all of A's thousand first.
    expect(waitingOfA).toBeGreaterThan(500);
    await rt.settle();
  }, 120_000);
});

describe('a restart with sends still journaled', () => {
  it('re-queues none of them: the reconciler finds each email already held, and each is sent once', async () => {
    // Arrange: a runtime on a data directory stops with a backlog of sends on its journal.
    const dir = mkdtempSync(join(tmpdir(), 'sendflow-fair-'));
    try {
      const first = await startTestRuntime({ SF_DATA_DIR: dir });
      const { key } = await first.newKey();
      const batch = Array.from({ length: 100 }, (_, j) => email(`r${j}@example.com`));
      for (let i = 0; i < 3; i++) {
        await first.call('/emails/batch', { method: 'POST', key, body: JSON.stringify(batch) });
      }
      await first.stop();
      const held = QueueJournal.open(join(dir, 'queues', 'sends.journal'));
      const journaled = held.messages().length;
      held.close();

      // Act
      const second = await startTestRuntime({ SF_DATA_DIR: dir });
      await second.settle();
      const requeued = second.queues.sends.stats.messagesSent;
      const list = (await (await second.call('/emails?limit=100', { key })).json()) as { data: { status: string }[] };
      await second.stop();

      // Assert
      expect(journaled).toBeGreaterThan(0);
      expect(requeued).toBe(0);
      expect(list.data.every((e) => e.status !== 'queued')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
