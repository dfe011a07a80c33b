// Holds the authorizer's key lookups in flight: a middleware on the local DynamoDB client that, once `hold()` is
// called, answers each read of the api keys table and then holds it until `release()`. The result is computed
// (from the key as it was read) but not yet back at the gateway: the window in which a revocation, or another
// request's whole attempt, can land.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { TEST_ENV } from './runtime';

export class KeyLookupHold {
  private readonly apiKeysTable = loadConfig(TEST_ENV, localTableDefaults()).tables.apiKeys;
  private holding = false;
  private released: Promise<void> = Promise.resolve();
  private open: () => void = () => {};
  /** Reads held since the last hold(). */
  held = 0;

  /** For startTestRuntime's `instrument` option. */
  readonly instrument = (client: DynamoDBClient): void => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const output = await next(args);
        const input = args.input as { TableName?: string };
        if (this.holding && context.commandName?.startsWith('Get') && input.TableName === this.apiKeysTable) {
          this.held++;
          await this.released;
        }
        return output;
      },
      { step: 'initialize', name: 'holdKeyLookups' },
    );
  };

  /** Holds every key lookup from now until release(). */
  hold(): void {
    this.released = new Promise((resolve) => {
      this.open = resolve;
    });
    this.held = 0;
    this.holding = true;
  }

  /** Holds no new lookup; those held go on at release(). */
  stopHolding(): void {
    this.holding = false;
  }

  release(): void {
    this.holding = false;
    this.open();
  }
}
