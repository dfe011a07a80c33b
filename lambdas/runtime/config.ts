// One configuration schema, parsed once at start-up, frozen; every problem is reported at once.
import { z } from 'zod';
import { type TableName, tableEnvVar, tableNames } from '../manifest';

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const schema = z.object({
  /** Largest request body accepted, in bytes; larger bodies get 413. */
  SF_MAX_BODY_BYTES: positiveInt.max(10 * 1024 * 1024).default(1024 * 1024),
  /** Requests per second allowed per client IP for requests without a valid key. */
  SF_IP_RATE_LIMIT: positiveInt.default(20),
  /** Authorizer result cache, seconds (API Gateway caps it at 3600). */
  SF_AUTH_CACHE_TTL: nonNegativeInt.max(3600).default(0),
  POWERTOOLS_LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'CRITICAL']).default('INFO'),
  /** Local runtime only. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  SF_HOST: z.string().min(1).default('127.0.0.1'),
  SF_DATA_DIR: z.string().min(1).default('.data'),
  SF_SEED: flag.default(true),
  ...(Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), z.string().min(3).max(255)])) as Record<
    string,
    z.ZodString
  >),
});

export interface Config {
  readonly maxBodyBytes: number;
  readonly ipRateLimit: number;
  readonly authCacheTtlSeconds: number;
  readonly logLevel: z.infer<typeof schema>['POWERTOOLS_LOG_LEVEL'];
  readonly port: number;
  readonly host: string;
  /** A directory, or `:memory:` for an ephemeral store. */
  readonly dataDir: string;
  /** Create a default account and key on first start of an empty store. */
  readonly seed: boolean;
  readonly tables: Readonly<Record<TableName, string>>;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses configuration from the environment. `defaults` fill variables the runtime knows better than the
 * environment (the local runtime names its own tables); the environment always wins.
 */
export function loadConfig(env: NodeJS.ProcessEnv, defaults: Record<string, string> = {}): Config {
  const source = { ...defaults, ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== '')) };
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const c = parsed.data;
  return Object.freeze({
    maxBodyBytes: c.SF_MAX_BODY_BYTES,
    ipRateLimit: c.SF_IP_RATE_LIMIT,
    authCacheTtlSeconds: c.SF_AUTH_CACHE_TTL,
    logLevel: c.POWERTOOLS_LOG_LEVEL,
    port: c.PORT,
    host: c.SF_HOST,
    dataDir: c.SF_DATA_DIR,
    seed: c.SF_SEED,
    tables: Object.freeze(
      Object.fromEntries(tableNames.map((table) => [table, String(source[tableEnvVar(table)])])) as Record<
        TableName,
        string
      >,
    ),
  });
}

/** Physical table names used by the local runtime (and DynamoDB Local tests). */
export function localTableDefaults(prefix = 'sendflow'): Record<string, string> {
  return Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), `${prefix}-${table}`]));
}
