// Emails in DynamoDB, keyed by id (GET /v1/emails/:id checks account and mode on the item).
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EmailRecord, EmailRepository } from '../../app/emails/ports';

export class DynamoEmailRepository implements EmailRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async createMany(emails: readonly EmailRecord[]): Promise<void> {
    for (let i = 0; i < emails.length; i += 25) {
      let requests: Record<string, unknown>[] | undefined = emails
        .slice(i, i + 25)
        .map((email) => ({ PutRequest: { Item: email } }));
      for (let round = 0; requests?.length; round++) {
        if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** round)));
        const { UnprocessedItems } = await this.doc.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: requests as never } }),
        );
        requests = UnprocessedItems?.[this.tableName] as Record<string, unknown>[] | undefined;
        if (round > 8 && requests?.length) throw new Error('DynamoDB kept items unprocessed');
      }
    }
  }
}
