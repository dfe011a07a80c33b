// The DynamoDB email history's commands (lambdas/adapters/dynamodb/email-history.ts), as sent: a status note
// reads the status item first (eventually consistent, half a read unit) and writes only when it outranks what
// is noted, so an event that does not raise the email's status costs no write unit (a failed condition costs
// one); the write stays conditional, so a note raced by another is still never lowered. A scanned status (sent,
// delivered, opened, clicked: most emails' path) is written only to take an email out of the index.
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoEmailHistory } from '../../lambdas/adapters/dynamodb/email-history';

const doc = mockClient(DynamoDBDocumentClient);
const tenant = { accountId: 'acct_1', mode: 'live' } as const;
const history = () =>
  new DynamoEmailHistory(doc as unknown as DynamoDBDocumentClient, 'events-table', { now: () => 0 });

beforeEach(() => doc.reset());

describe('DynamoEmailHistory.noteStatus', () => {
  it('writes nothing when the noted status already ranks as high or higher', async () => {
    // Arrange
    doc.on(GetCommand).resolves({ Item: { emailId: 'em_1', eventId: '#status', rank: 20, statusKey: 'k' } });

    // Act
    await history().noteStatus(tenant, 'em_1', { status: 'bounced', rank: 20 });
    await history().noteStatus(tenant, 'em_1', { status: 'sent', rank: 10 });

    // Assert
    expect(doc).toHaveReceivedCommandWith(GetCommand, {
      TableName: 'events-table',
      Key: { emailId: 'em_1', eventId: '#status' },
      ProjectionExpression: '#rank, statusKey',
      ExpressionAttributeNames: { '#rank': 'rank' },
    });
    expect(doc.commandCalls(GetCommand)[0]?.args[0].input.ConsistentRead).toBeUndefined();
    expect(doc).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('writes the note, conditionally, when it outranks the noted status or none is noted', async () => {
    // Arrange
    doc
      .on(GetCommand)
      .resolvesOnce({ Item: { rank: 10 } })
      .resolvesOnce({});
    doc.on(UpdateCommand).resolves({});

    // Act
    await history().noteStatus(tenant, 'em_1', { status: 'bounced', rank: 20 });
    await history().noteStatus(tenant, 'em_2', { status: 'delivery_delayed', rank: 10 });

    // Assert
    const updates = doc.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(updates.map((u) => u.Key)).toEqual([
      { emailId: 'em_1', eventId: '#status' },
      { emailId: 'em_2', eventId: '#status' },
    ]);
    for (const update of updates) {
      expect(update.ConditionExpression).toBe('attribute_not_exists(#rank) OR #rank < :r');
    }
    expect(updates[0]?.ExpressionAttributeValues?.[':r']).toBe(20);
  });

  it('writes nothing for a scanned status (queued, sent, delivered) unless the email is in the index', async () => {
    // Arrange: em_1 has nothing noted, em_2 a scanned status noted earlier (not indexed), em_3 is indexed (bounced).
    doc
      .on(GetCommand)
      .resolvesOnce({})
      .resolvesOnce({})
      .resolvesOnce({ Item: { rank: 10 } })
      .resolvesOnce({ Item: { rank: 10, statusKey: 'acct_1#live#bounced#3' } });
    doc.on(UpdateCommand).resolves({});

    // Act: the common path (sent, then delivered), a later copy sent, and a delivery after a bounce.
    await history().noteStatus(tenant, 'em_1', { status: 'sent', rank: 10 });
    await history().noteStatus(tenant, 'em_1', { status: 'delivered', rank: 20 });
    await history().noteStatus(tenant, 'em_2', { status: 'sent', rank: 30 });
    await history().noteStatus(tenant, 'em_3', { status: 'delivered', rank: 20 });

    // Assert: one write, which takes em_3 out of the index (its entry is deleted), conditionally.
    const updates = doc.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({
      Key: { emailId: 'em_3', eventId: '#status' },
      UpdateExpression: 'SET #rank = :r, expiresAt = :exp REMOVE statusKey',
      ConditionExpression: 'attribute_not_exists(#rank) OR #rank < :r',
    });
    expect(updates[0]?.ExpressionAttributeValues?.[':r']).toBe(20);
  });
});
