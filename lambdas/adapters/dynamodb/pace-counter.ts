// The pace counter on DynamoDB (the rate-limits table): one item per paced webhook holding its turns' horizon
// and its next allowed start. A turn is one conditional UpdateItem (two when this process's guess of busy or
// idle was wrong: the first turn after another process's), a start one more (granted or refused, 1 WCU either way); a refusal returns the item as it stands
// (ReturnValuesOnConditionCheckFailure), so no read is ever made. The item expires by TTL a day after its last
// write; a lost item only makes the next turns start from now (the start's check still holds the pace).
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PaceCounter } from '../../app/webhooks/pace';
import type { PaceTake } from '../../domain/webhooks/pace';
import { unlessConditionFails } from './operations';

const EXPIRY_SECONDS = 86_400;
/** Busy and idle guesses a turn tries before giving up (each wrong guess means another process just wrote). */
const RESERVE_TRIES = 4;

/** The counter item's key: apart from the request windows' `account:`/`ip:` subjects. */
export const paceKey = (webhookId: string) => `pace#${webhookId}`;

export class DynamoPaceCounter implements PaceCounter {
  /** The horizon this process last saw per webhook: ahead of now, the endpoint is busy (guess the busy write). */
  private readonly seen = new Map<string, number>();
  /** The last turn asked per webhook in this process (settled or not). */
  private readonly queued = new Map<string, Promise<unknown>>();

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * A process's turns for one webhook are asked one after another: each then guesses busy or idle from the one
   * before, so a batch of a paced webhook's jobs costs one write a turn, not two.
   */
  reserve(webhookId: string, spacingMs: number, now: number): Promise<number> {
    const before = this.queued.get(webhookId) ?? Promise.resolve();
    const mine = before.then(() => this.reserveNow(webhookId, spacingMs, now));
    const settled = mine.catch(() => undefined);
    this.queued.set(webhookId, settled);
    void settled.then(() => {
      if (this.queued.get(webhookId) === settled) this.queued.delete(webhookId);
    });
    return mine;
  }

  private async reserveNow(webhookId: string, spacingMs: number, now: number): Promise<number> {
    let busy = (this.seen.get(webhookId) ?? 0) > now;
    for (let tries = 0; tries < RESERVE_TRIES; tries++, busy = !busy) {
      const turn = busy ? await this.next(webhookId, spacingMs, now) : await this.first(webhookId, spacingMs, now);
      if (turn !== null) {
        this.seen.set(webhookId, turn + spacingMs);
        return turn;
      }
    }
    throw new Error(`The pace of ${webhookId} changed under ${RESERVE_TRIES} tries in a row`);
  }

  /** Busy: the horizon is ahead of now; it is the turn, and moves one spacing on. */
  private async next(webhookId: string, spacingMs: number, now: number): Promise<number | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { key: paceKey(webhookId) },
          UpdateExpression: 'SET horizon = horizon + :spacing, expiresAt = :exp',
          ConditionExpression: 'horizon > :now',
          ExpressionAttributeValues: { ':spacing': spacingMs, ':now': now, ':exp': expiry(now) },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    const horizon = written?.Attributes?.horizon;
    return typeof horizon === 'number' ? horizon - spacingMs : null;
  }

  /** Idle: no horizon, or one already passed; the turn is now. */
  private async first(webhookId: string, spacingMs: number, now: number): Promise<number | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { key: paceKey(webhookId) },
          UpdateExpression: 'SET horizon = :horizon, expiresAt = :exp',
          ConditionExpression: 'attribute_not_exists(horizon) OR horizon <= :now',
          ExpressionAttributeValues: { ':horizon': now + spacingMs, ':now': now, ':exp': expiry(now) },
        }),
      ),
    );
    return written === null ? null : now;
  }

  async take(webhookId: string, spacingMs: number, now: number): Promise<PaceTake> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { key: paceKey(webhookId) },
          UpdateExpression: 'SET nextAt = :next, expiresAt = :exp',
          ConditionExpression: 'attribute_not_exists(nextAt) OR nextAt <= :now',
          ExpressionAttributeValues: { ':now': now, ':next': now + spacingMs, ':exp': expiry(now) },
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

const expiry = (now: number) => Math.ceil(now / 1000) + EXPIRY_SECONDS;
