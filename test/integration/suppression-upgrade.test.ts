// A data directory holding a suppression as earlier versions stored it (one partition key per tenant, no layout
// mark): `npm start` on it moves it to its shard once, and the next send to the address is suppressed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SUPPRESSION_LAYOUT_MARK, suppressionKey } from '../../lambdas/adapters/dynamodb/suppressions';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { documentClient } from '../../lambdas/runtime/document-client';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { startTestRuntime, TEST_ENV, type TestRuntime } from '../support/runtime';

const { suppressions } = loadConfig(TEST_ENV, localTableDefaults()).tables;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendflow-suppression-upgrade-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function withDoc<T>(runtime: TestRuntime, work: (doc: ReturnType<typeof documentClient>) => Promise<T>) {
  const client = localDynamoClient(runtime.dynamoEndpoint);
  try {
    return await work(documentClient(client));
  } finally {
    client.destroy();
  }
}

it('honours a suppression stored before the shards: moved at start, the next send to it is suppressed', async () => {
  // Arrange: the earlier layout, and no mark (as a data directory from before has none)
  const env = { SF_DATA_DIR: join(dir, 'data') };
  const first = await startTestRuntime(env);
  const { accountId, key } = await first.newKey();
  const tenant = { accountId, mode: 'test' } as const;
  await withDoc(first, async (doc) => {
    await doc.send(
      new PutCommand({
        TableName: suppressions,
        Item: {
          tenant: `${accountId}#test`,
          address: 'old@example.com',
          reason: 'complaint',
          createdAt: '2026-01-01T00:00:00.000Z',
        },
      }),
    );
    await doc.send(new DeleteCommand({ TableName: suppressions, Key: SUPPRESSION_LAYOUT_MARK }));
  });
  await first.stop();

  // Act
  const second = await startTestRuntime(env);
  try {
    const sent = await second.call('/emails', {
      method: 'POST',
      key,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        from: 'Acme <hello@acme.example>',
        to: ['old@example.com', 'new@example.com'],
        subject: 'Hello',
        html: '<p>Hello</p>',
      }),
    });
    const { id } = (await sent.json()) as { id: string };
    await second.settle();
    const shown = (await (await second.call(`/emails/${id}`, { key })).json()) as { suppressed: string[] };
    const { Items = [] } = await withDoc(second, (doc) => doc.send(new ScanCommand({ TableName: suppressions })));

    // Assert: suppressed; the item under its shard with its reason, the old key gone, the table marked
    expect(shown.suppressed).toEqual(['old@example.com']);
    expect(Items.filter((item) => String(item.tenant).startsWith(accountId))).toEqual([
      {
        tenant: suppressionKey(tenant, 'old@example.com'),
        address: 'old@example.com',
        reason: 'complaint',
        createdAt: '2026-01-01T00:00:00.000Z',
      },
    ]);
    expect(Items).toContainEqual(SUPPRESSION_LAYOUT_MARK);
  } finally {
    await second.stop();
  }
});
