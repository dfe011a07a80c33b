// The pace counter on DynamoDB (the rate-limits table): one item per paced webhook holding its next allowed
// start, taken with one conditional UpdateItem per request (granted or refused, 1 WCU either way). A refusal
// returns the item as it stands (ReturnValuesOnConditionCheckFailure), so no read is ever made. The item
// expires by TTL a minute after its last start; nothing reads a stale one.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PaceCounter } from '../../app/webhooks/pace';
import type { PaceTake } from '../../domain/webhooks/pace';

const EXPIRY_GRACE_SECONDS = 60;

/** The counter item's key: apart from the request windows' `account:`/`ip:` subjects. */
export const paceKey = (webhookId: string) => `pace#${webhookId}`;

export class DynamoPaceCounter implements PaceCounter {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async take(webhookId: string, spacingMs: number, now: number): Promise<PaceTake> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { key: paceKey(webhookId) },
          UpdateExpression: 'SET nextAt = :next, expiresAt = :exp',
          ConditionExpression: 'attribute_not_exists(nextAt) OR nextAt <= :now',
          ExpressionAttributeValues: {
            ':now': now,
            ':next': now + spacingMs,
            ':exp': Math.ceil((now + spacingMs) / 1000) + EXPIRY_GRACE_SECONDS,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { granted: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const nextAt = error.Item?.nextAt?.N;
      // A refusal always has the item; without one, ask again a spacing later rather than guess "granted".
      return { granted: false, nextAt: nextAt === undefined ? now + spacingMs : Number(nextAt) };
    }
  }
}
