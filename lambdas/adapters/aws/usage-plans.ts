// UsagePlans on API Gateway: every account owns one API Gateway API key, its usage identity (the authorizer
// returns it as usageIdentifierKey), and that key sits in exactly one of the four usage plans.
// API Gateway allows 10,000 API keys per AWS account and region, a hard limit: beyond that, deploy more
// copies of the stacks (other accounts or regions) and assign customers to one, or stop enrolling the
// free tier (its requests then get 403 INVALID_API_KEY, so that also means dropping apiKeyRequired).
import { randomBytes } from 'node:crypto';
import {
  type APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetUsagePlanKeyCommand,
  NotFoundException,
} from '@aws-sdk/client-api-gateway';
import type { Account, RandomBytes, UsagePlans } from '../../app/ports';
import { base62 } from '../../domain/api-keys';
import type { PlanName } from '../../domain/plans';

/** API Gateway accepts 20–128 alphanumeric characters; 40 base62 characters carry about 238 bits. */
export const USAGE_KEY_LENGTH = 40;

export class UsagePlanError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsagePlanError';
  }
}

export interface ApiGatewayUsagePlansOptions {
  readonly client: APIGatewayClient;
  /** Usage plan id per plan: the stack outputs UsagePlanFree … UsagePlanScale. */
  readonly usagePlanIds: Readonly<Record<PlanName, string>>;
  /** Source of key values; defaults to crypto random bytes. */
  readonly random?: RandomBytes;
}

export class ApiGatewayUsagePlans implements UsagePlans {
  private readonly client: APIGatewayClient;
  private readonly usagePlanIds: Readonly<Record<PlanName, string>>;
  private readonly random: RandomBytes;

  constructor(options: ApiGatewayUsagePlansOptions) {
    this.client = options.client;
    this.usagePlanIds = options.usagePlanIds;
    this.random = options.random ?? randomBytes;
  }

  async enroll(accountId: string, plan: PlanName): Promise<Pick<Account, 'usageKey' | 'usageKeyId'>> {
    const value = base62(this.random, USAGE_KEY_LENGTH);
    const created = await this.client.send(
      new CreateApiKeyCommand({
        name: `sendflow-${accountId}`,
        description: `Usage-plan identity of Sendflow account ${accountId}`,
        enabled: true,
        value,
      }),
    );
    const keyId = created.id;
    if (!keyId) throw new UsagePlanError(`API Gateway returned no id for the key of account ${accountId}.`);
    try {
      await this.addToPlan(keyId, plan);
    } catch (error) {
      // API keys count toward a hard limit of 10,000 per account and region: leave no orphan behind.
      await this.client.send(new DeleteApiKeyCommand({ apiKey: keyId })).catch(() => undefined);
      throw new UsagePlanError(`Could not add the key of account ${accountId} to the ${plan} plan.`, { cause: error });
    }
    return { usageKey: value, usageKeyId: keyId };
  }

  /**
   * Removes the key from the old plan first, then adds it to the new one. The other order cannot work:
   * API Gateway lets a key belong to only one usage plan per API stage, and all four plans share stage v1,
   * so adding first fails with ConflictException. Between the two calls the key is in no plan and the
   * account's requests get 403 for a moment; if adding fails, the key goes back to its old plan.
   * Safe to retry after a partial failure: a key already gone from the old plan, or already in the new one,
   * counts as done.
   */
  async move(account: Account, to: PlanName): Promise<void> {
    const keyId = account.usageKeyId;
    if (!keyId) {
      throw new UsagePlanError(`Account ${account.id} has no API Gateway key to move; enroll it first.`);
    }
    if (account.plan === to) return;
    await this.removeFromPlan(keyId, account.plan);
    try {
      await this.addToPlan(keyId, to);
    } catch (error) {
      try {
        await this.addToPlan(keyId, account.plan);
      } catch (restoreError) {
        throw new UsagePlanError(
          `Could not move account ${account.id} to the ${to} plan, nor put it back on ${account.plan}: ` +
            'its key is in no usage plan and its requests are refused until it is added to one.',
          { cause: new AggregateError([error, restoreError]) },
        );
      }
      throw new UsagePlanError(`Could not move account ${account.id} to the ${to} plan; it stays on ${account.plan}.`, {
        cause: error,
      });
    }
  }

  private async addToPlan(keyId: string, plan: PlanName): Promise<void> {
    const usagePlanId = this.usagePlanIds[plan];
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId, keyType: 'API_KEY' }));
    } catch (error) {
      if (error instanceof ConflictException && (await this.isInPlan(keyId, usagePlanId))) return;
      throw error;
    }
  }

  private async removeFromPlan(keyId: string, plan: PlanName): Promise<void> {
    try {
      await this.client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: this.usagePlanIds[plan], keyId }));
    } catch (error) {
      if (!(error instanceof NotFoundException)) throw error;
    }
  }

  private async isInPlan(keyId: string, usagePlanId: string): Promise<boolean> {
    try {
      await this.client.send(new GetUsagePlanKeyCommand({ usagePlanId, keyId }));
      return true;
    } catch (error) {
      if (error instanceof NotFoundException) return false;
      throw error;
    }
  }
}
