// A data directory holding emails in the shape the code before emailParts wrote them (body, unsubscribe links and
// recipient states inside the email item, no expiresAt): `npm start` on it moves them to their parts once, and the
// API shows every email exactly as before.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { documentClient } from '../../lambdas/runtime/document-client';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { startTestRuntime, TEST_ENV, type TestRuntime } from '../support/runtime';

/** The runtime's table names (its local defaults). */
const tables = loadConfig(TEST_ENV, localTableDefaults()).tables;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sendflow-email-upgrade-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Rewrites a stored email into the layout of before: everything in its item, no parts, no expiresAt. */
async function toLegacyShape(runtime: TestRuntime, dataDir: string, id: string): Promise<void> {
  const client = localDynamoClient(runtime.dynamoEndpoint);
  const doc = documentClient(client);
  const { emails, emailParts } = tables;
  try {
    const { Item } = await doc.send(new GetCommand({ TableName: emails, Key: { id } }));
    const { Items = [] } = await doc.send(
      new QueryCommand({
        TableName: emailParts,
        KeyConditionExpression: 'emailId = :id',
        ExpressionAttributeValues: { ':id': id },
      }),
    );
    const part = (name: string) => Items.find((item) => item.part === name) ?? {};
    const stored = await runtime.repos.emails.bodies.get(id);
    const body = { ...stored, headers: Object.entries(stored?.headers ?? {}) };
    // Locally the body is a file of the data directory: before the parts there was none.
    rmSync(join(dataDir, 'emails', id), { recursive: true, force: true });
    const states = Object.fromEntries(
      Items.filter((item) => String(item.part).startsWith('r#')).map((item) => [
        String(Number(String(item.part).slice(2))),
        item.recipientState,
      ]),
    );
    const { expiresAt: _expiresAt, ...meta } = Item ?? {};
    await doc.send(
      new PutCommand({
        TableName: emails,
        Item: {
          ...meta,
          ...(body.html !== undefined ? { html: body.html } : {}),
          ...(body.text !== undefined ? { text: body.text } : {}),
          headers: body.headers,
          unsubscribeUrls: part('links').unsubscribeUrls,
          recipientStates: states,
        },
      }),
    );
    for (const item of Items) {
      await doc.send(new DeleteCommand({ TableName: emailParts, Key: { emailId: id, part: item.part } }));
    }
  } finally {
    client.destroy();
  }
}

it('keeps every email of a data directory from before the parts: the same on the API after a restart, moved once', async () => {
  // Arrange: an email sent to two recipients, then stored as the earlier code stored it.
  const env = { SF_DATA_DIR: join(dir, 'data') };
  const first = await startTestRuntime(env);
  let id = '';
  let before: unknown;
  let states: unknown;
  try {
    const { key } = await first.newKey();
    const sent = await first.call('/emails', {
      method: 'POST',
      key,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        from: 'Acme <hello@acme.example>',
        to: ['ada@example.com', 'bob@example.com'],
        subject: 'Hello',
        html: '<p>Hello</p>',
        text: 'Hello',
        headers: { 'X-Entity-Ref-ID': 'ref-1' },
      }),
    });
    id = ((await sent.json()) as { id: string }).id;
    await first.settle();
    // The copies' states as sent left them (claimed: their email.sent in the history is their record).
    states = (await first.repos.emails.get(id))?.recipientStates;
    await toLegacyShape(first, env.SF_DATA_DIR, id);
    before = await (await first.call(`/emails/${id}`, { key })).json();
    await first.stop();

    // Act: start again on the same data directory.
    const second = await startTestRuntime(env);
    try {
      const after = await (await second.call(`/emails/${id}`, { key })).json();
      const client = localDynamoClient(second.dynamoEndpoint);
      const doc = documentClient(client);
      const { Item } = await doc.send(new GetCommand({ TableName: tables.emails, Key: { id } }));
      const email = await second.repos.emails.get(id);
      client.destroy();

      // Assert
      expect(before).toMatchObject({ id, to: ['ada@example.com', 'bob@example.com'], subject: 'Hello' });
      expect(after).toEqual(before);
      for (const name of ['html', 'text', 'headers', 'unsubscribeUrls', 'recipientStates'])
        expect(Item).not.toHaveProperty(name);
      expect(typeof Item?.expiresAt).toBe('number');
      expect(existsSync(join(env.SF_DATA_DIR, 'emails', id, 'body.json'))).toBe(true);
      expect(email).toMatchObject({ html: '<p>Hello</p>', text: 'Hello', headers: { 'X-Entity-Ref-ID': 'ref-1' } });
      expect(Object.values(email?.recipientStates ?? {}).map((s) => s.state)).toEqual(['claimed', 'claimed']);
      expect(email?.recipientStates).toEqual(states);
    } finally {
      await second.stop();
    }
  } catch (error) {
    await first.stop().catch(() => undefined);
    throw error;
  }
});
