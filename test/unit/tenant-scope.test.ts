// tenant-scope.ts: a queue batch is handed on per tenant, each part in its tenant's scope (which the embedded
// DynamoDB's client reads for its turns), with the parts' failures merged; a part that throws fails alone.
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { asTenant, currentTenant, perTenant } from '../../lambdas/runtime/local/tenant-scope';

const record = (messageId: string, account?: string) =>
  ({ messageId, body: JSON.stringify(account ? { account } : {}) }) as SQSRecord;
const accountOf = (body: string) => (JSON.parse(body) as { account?: string }).account;

describe('tenant scope', () => {
  it('carries the tenant through awaits, and is empty outside any', async () => {
    expect(currentTenant()).toBe('');
    const seen = await asTenant('acct_a', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentTenant();
    });
    expect(seen).toBe('acct_a');
    expect(currentTenant()).toBe('');
  });

  it("runs each tenant's records as one invocation in its scope, and merges their failures", async () => {
    // Arrange: B's invocation throws; A fails one of its records; '' is the tenant of a record naming none.
    const calls: { tenant: string; ids: string[] }[] = [];
    const handler = perTenant(async (event: SQSEvent) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      calls.push({ tenant: currentTenant(), ids: event.Records.map((r) => r.messageId) });
      if (currentTenant() === 'acct_b') throw new Error('boom');
      return { batchItemFailures: currentTenant() === 'acct_a' ? [{ itemIdentifier: 'a2' }] : [] };
    }, accountOf);

    // Act
    const answer = await handler({
      Records: [
        record('a1', 'acct_a'),
        record('b1', 'acct_b'),
        record('a2', 'acct_a'),
        record('n1'),
        record('b2', 'acct_b'),
      ],
    });

    // Assert
    expect(calls.sort((x, y) => x.tenant.localeCompare(y.tenant))).toEqual([
      { tenant: '', ids: ['n1'] },
      { tenant: 'acct_a', ids: ['a1', 'a2'] },
      { tenant: 'acct_b', ids: ['b1', 'b2'] },
    ]);
    expect(answer?.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['a2', 'b1', 'b2']);
  });

  it("hands a one-tenant batch on whole, in that tenant's scope", async () => {
    const event = { Records: [record('a1', 'acct_a'), record('a2', 'acct_a')] };
    let seen: { event: SQSEvent; tenant: string } | undefined;
    const answer = await perTenant(async (e: SQSEvent) => {
      seen = { event: e, tenant: currentTenant() };
      return { batchItemFailures: [] };
    }, accountOf)(event);
    expect(seen).toEqual({ event, tenant: 'acct_a' });
    expect(answer).toEqual({ batchItemFailures: [] });
  });
});
