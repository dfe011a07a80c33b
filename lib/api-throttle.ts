// API Gateway throttling of the stage from CDK context (`sendflow:apiThrottle`): a default limit for every method,
// and a tighter one for each public method (no API key, so no usage plan limits them per client). Usage plans
// limit each account's key; these limit each method across every caller, so no one method (a flood of
// unsubscribe posts, a burst of sends) can take the account-wide limit every API of the region shares.
import { contextObject } from './context-object';

export const CONTEXT_API_THROTTLE = 'sendflow:apiThrottle';

export interface ApiThrottle {
  /** Requests per second every method of the stage takes, all callers together (steady rate). */
  readonly rateLimit: number;
  /** Requests every method may take at once above its rate (API Gateway's token bucket). */
  readonly burstLimit: number;
  /** The same for each public route's method (dashboard, unsubscribe, confirmation, API reference). */
  readonly publicRateLimit: number;
  readonly publicBurstLimit: number;
}

/**
 * Defaults. Every method: 1,000 requests/s (about what the API's 100 reserved executions serve at 100 ms each,
 * and two scale-plan tenants at full rate), bursts of 2,000 (a scale tenant's burst of 1,000 fits twice), well
 * under the account's 10,000/s and 5,000 burst that every stage and API of the region share. Public methods:
 * 100/s each, bursts of 200: a large newsletter's one-click unsubscribes, at 360,000 an hour per method.
 */
export const DEFAULT_API_THROTTLE: ApiThrottle = {
  rateLimit: 1_000,
  burstLimit: 2_000,
  publicRateLimit: 100,
  publicBurstLimit: 200,
};

/** Any subset of the four limits, whole numbers from 1; the others keep DEFAULT_API_THROTTLE's. */
export function parseApiThrottle(raw: unknown, key = CONTEXT_API_THROTTLE): ApiThrottle {
  if (raw === undefined) return DEFAULT_API_THROTTLE;
  const value = contextObject(raw, key, '{"rateLimit": 1000, "burstLimit": 2000}');
  const problems: string[] = [];
  for (const [name, limit] of Object.entries(value)) {
    if (!(name in DEFAULT_API_THROTTLE)) {
      problems.push(`unknown setting "${name}" (${Object.keys(DEFAULT_API_THROTTLE).join(', ')})`);
    } else if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
      problems.push(`${name} must be a whole number of at least 1, got ${JSON.stringify(limit)}`);
    }
  }
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return { ...DEFAULT_API_THROTTLE, ...(value as Partial<ApiThrottle>) };
}
