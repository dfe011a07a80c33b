// Unit tests for configuration (lambdas/runtime/config.ts): defaults, overrides, every problem at once, frozen.
import { describe, expect, it } from 'vitest';
import { MAX_SEND_BODY_BYTES } from '../../lambdas/domain/body-ceiling';
import { tableEnvVar, tableNames } from '../../lambdas/manifest';
import { ConfigError, loadConfig, localTableDefaults } from '../../lambdas/runtime/config';

/** One production-looking name per manifest table: `prod-<table>`. */
const TABLES = Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), `prod-${table}`]));
const tablesNamed = (prefix: string) => Object.fromEntries(tableNames.map((table) => [table, `${prefix}-${table}`]));

/** Runs loadConfig expecting a ConfigError and returns its problems. */
function problemsOf(env: NodeJS.ProcessEnv, defaults?: Record<string, string>): readonly string[] {
  try {
    loadConfig(env, defaults);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('tableEnvVar', () => {
  it('names one SF_TABLE_ variable per manifest table, in upper snake case', () => {
    expect(tableEnvVar('apiKeys')).toBe('SF_TABLE_API_KEYS');
    expect(new Set(tableNames.map(tableEnvVar)).size).toBe(tableNames.length);
    for (const name of tableNames.map(tableEnvVar)) expect(name).toMatch(/^SF_TABLE_[A-Z_]+$/);
  });
});

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    // Act
    const config = loadConfig({ ...TABLES });

    // Assert
    expect(config).toEqual({
      maxBodyBytes: 1024 * 1024,
      maxSendBodyBytes: MAX_SEND_BODY_BYTES,
      ipRateLimit: 20,
      authCacheTtlSeconds: 0,
      logLevel: 'INFO',
      metricsService: 'sendflow',
      port: 3000,
      host: '127.0.0.1',
      smtpPort: 2525,
      dataDir: '.data',
      dataDirWaitSeconds: 30,
      emailRetentionSeconds: 30 * 86_400,
      inboundParseMs: 10_000,
      listenMaxWaitMs: 20_000,
      seed: true,
      localHttp: { requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, bodyIdleTimeoutMs: 10_000 },
      tables: tablesNamed('prod'),
      webhooks: {
        retryDelaysSeconds: [1, 30, 300, 1800],
        attemptTimeoutMs: 10_000,
        cacheSeconds: 1,
        disableAfterSeconds: 432_000,
        failingAfterSeconds: 86_400,
        aws: { region: 'us-east-1' },
        allowPrivateUrls: false,
        retentionSeconds: 30 * 86_400,
        reconcileGraceSeconds: 120,
        reconcileIntervalSeconds: 30,
      },
      attachments: { allowPrivateUrls: false },
      simulatorStepSeconds: 1,
      domainVerifySeconds: 10,
      reputation: {
        windowDays: 7,
        minimumSent: 200,
        warn: { bounceRate: 0.04, complaintRate: 0.0008 },
        pause: { bounceRate: 0.08, complaintRate: 0.003 },
        judgeTestMode: false,
        events: false,
      },
      storedFormats: { deliveryShards: true, deliveryPayloadZ1: true, suppressionEvents: true },
      aws: {},
    });
  });

  it('reads every variable from the environment, coercing numbers and flags', () => {
    // Arrange
    const env = {
      ...TABLES,
      SF_MAX_BODY_BYTES: '2048',
      SF_IP_RATE_LIMIT: '5',
      SF_AUTH_CACHE_TTL: '300',
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      PORT: '0',
      SF_HOST: '::1',
      SF_DATA_DIR: ':memory:',
      SF_SEED: 'false',
    };

    // Act
    const config = loadConfig(env);

    // Assert
    expect(config).toMatchObject({
      maxBodyBytes: 2048,
      ipRateLimit: 5,
      authCacheTtlSeconds: 300,
      logLevel: 'DEBUG',
      port: 0,
      host: '::1',
      dataDir: ':memory:',
      seed: false,
    });
  });

  it('puts the inbound SMTP server on SF_SMTP_PORT: 2525 by default, a free port (0) when PORT is 0 or when asked', () => {
    expect(loadConfig(TABLES).smtpPort).toBe(2525);
    expect(loadConfig({ ...TABLES, PORT: '4000' }).smtpPort).toBe(2525);
    expect(loadConfig({ ...TABLES, PORT: '0' }).smtpPort).toBe(0);
    expect(loadConfig({ ...TABLES, PORT: '0', SF_SMTP_PORT: '2626' }).smtpPort).toBe(2626);
    expect(loadConfig({ ...TABLES, SF_SMTP_PORT: '0' }).smtpPort).toBe(0);
    expect(() => loadConfig({ ...TABLES, SF_SMTP_PORT: '65536' })).toThrow(/SF_SMTP_PORT/);
  });

  it('offers STARTTLS only with both SF_SMTP_TLS_KEY and SF_SMTP_TLS_CERT; one alone is a configuration error', () => {
    expect(loadConfig(TABLES).smtpTls).toBeUndefined();
    expect(loadConfig({ ...TABLES, SF_SMTP_TLS_KEY: 'k.pem', SF_SMTP_TLS_CERT: 'c.pem' }).smtpTls).toEqual({
      keyFile: 'k.pem',
      certFile: 'c.pem',
    });
    expect(() => loadConfig({ ...TABLES, SF_SMTP_TLS_KEY: 'k.pem' })).toThrow(/SF_SMTP_TLS_KEY and SF_SMTP_TLS_CERT/);
  });

  it('caps a listen-session poll’s wait with SF_LISTEN_MAX_WAIT_SECONDS (0 to 20; 0 on AWS)', () => {
    expect(loadConfig({ ...TABLES, SF_LISTEN_MAX_WAIT_SECONDS: '0' }).listenMaxWaitMs).toBe(0);
    expect(loadConfig({ ...TABLES, SF_LISTEN_MAX_WAIT_SECONDS: '5' }).listenMaxWaitMs).toBe(5_000);
    expect(() => loadConfig({ ...TABLES, SF_LISTEN_MAX_WAIT_SECONDS: '21' })).toThrow(ConfigError);
  });

  it('reads SF_LOG_FORMAT (json or pretty; unset leaves it to the local runtime), refusing anything else', () => {
    expect(loadConfig(TABLES).logFormat).toBeUndefined();
    expect(loadConfig({ ...TABLES, SF_LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(loadConfig({ ...TABLES, SF_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ ...TABLES, SF_LOG_FORMAT: 'text' })).toThrow(/SF_LOG_FORMAT/);
  });

  it('turns metrics off with SF_METRICS=false, names their service with SF_METRICS_SERVICE, refuses odd names', () => {
    expect(loadConfig({ ...TABLES, SF_METRICS: 'false' }).metricsService).toBeNull();
    expect(loadConfig({ ...TABLES, SF_METRICS_SERVICE: 'sendflow-staging' }).metricsService).toBe('sendflow-staging');
    expect(() => loadConfig({ ...TABLES, SF_METRICS_SERVICE: 'acct 1/2' })).toThrow(/SF_METRICS_SERVICE/);
  });

  it('paces live sends only when SF_SES_MAX_SEND_RATE is set: a positive number, fractions allowed', () => {
    expect(loadConfig(TABLES).sesMaxSendRate).toBeUndefined();
    expect(loadConfig({ ...TABLES, SF_SES_MAX_SEND_RATE: '1.4' }).sesMaxSendRate).toBe(1.4);
    for (const bad of ['0', '-2', 'fast', '10001']) {
      expect(() => loadConfig({ ...TABLES, SF_SES_MAX_SEND_RATE: bad })).toThrow(/SF_SES_MAX_SEND_RATE/);
    }
  });

  it('reads the reputation policy from SF_REPUTATION_*, and refuses one that is not below SES’s own, listing every problem', () => {
    const config = loadConfig({
      ...TABLES,
      SF_REPUTATION_WINDOW_DAYS: '14',
      SF_REPUTATION_MINIMUM_SENT: '10',
      SF_REPUTATION_WARN_BOUNCE_RATE: '0.03',
      SF_REPUTATION_WARN_COMPLAINT_RATE: '0.0005',
      SF_REPUTATION_PAUSE_BOUNCE_RATE: '0.06',
      SF_REPUTATION_PAUSE_COMPLAINT_RATE: '0.002',
      SF_REPUTATION_JUDGE_TEST_MODE: 'true',
      SF_REPUTATION_EVENTS: '1',
    });
    expect(config.reputation).toEqual({
      windowDays: 14,
      minimumSent: 10,
      warn: { bounceRate: 0.03, complaintRate: 0.0005 },
      pause: { bounceRate: 0.06, complaintRate: 0.002 },
      judgeTestMode: true,
      events: true,
    });
    expect(
      problemsOf({
        ...TABLES,
        SF_REPUTATION_WINDOW_DAYS: '31',
        SF_REPUTATION_WARN_BOUNCE_RATE: '0.09',
        SF_REPUTATION_PAUSE_BOUNCE_RATE: '0.1',
        SF_REPUTATION_PAUSE_COMPLAINT_RATE: '0.005',
      }),
    ).toEqual([
      'SF_REPUTATION: windowDays must be a whole number of days from 1 to 30',
      "SF_REPUTATION: pause.bounceRate must be below SES's own pause (10%)",
      "SF_REPUTATION: pause.complaintRate must be below SES's own pause (0.5%)",
    ]);
  });

  it('keeps metrics off in the local runtime unless SF_METRICS says otherwise', () => {
    expect(loadConfig({}, localTableDefaults()).metricsService).toBeNull();
    expect(loadConfig({ SF_METRICS: 'true' }, localTableDefaults()).metricsService).toBe('sendflow');
  });

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads SF_SEED=%s as %s', (value, expected) => {
    expect(loadConfig({ ...TABLES, SF_SEED: value }).seed).toBe(expected);
  });

  it('lets runtime defaults fill the table names', () => {
    // Act
    const config = loadConfig({}, localTableDefaults('dev'));

    // Assert
    expect(config.tables).toEqual(tablesNamed('dev'));
    // The local runtime allows http and loopback webhook URLs; AWS never does (default false above).
    expect(config.webhooks.allowPrivateUrls).toBe(true);
    // Attachment `path`s do not follow it: their bodies come back to the caller. Only an explicit setting opens them.
    expect(config.attachments.allowPrivateUrls).toBe(false);
    expect(
      loadConfig({ SF_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true' }, localTableDefaults('dev')).attachments.allowPrivateUrls,
    ).toBe(true);
  });

  it('parses the retry schedule and refuses a malformed one', () => {
    expect(loadConfig({ ...TABLES, SF_RETRY_DELAYS: '0.5, 2,10' }).webhooks.retryDelaysSeconds).toEqual([0.5, 2, 10]);
    expect(problemsOf({ ...TABLES, SF_RETRY_DELAYS: '1,soon' })[0]).toMatch(/^SF_RETRY_DELAYS/);
    expect(problemsOf({ ...TABLES, SF_RETRY_DELAYS: '-1' })[0]).toMatch(/^SF_RETRY_DELAYS/);
  });

  it('lets the environment win over runtime defaults', () => {
    // Arrange
    const defaults = { ...localTableDefaults('dev'), PORT: '4000', SF_SEED: 'false' };

    // Act
    const config = loadConfig({ SF_TABLE_API_KEYS: 'from-env', PORT: '5000' }, defaults);

    // Assert
    expect(config.port).toBe(5000);
    expect(config.seed).toBe(false);
    expect(config.tables.apiKeys).toBe('from-env');
    expect(config.tables.accounts).toBe('dev-accounts');
  });

  it('treats an empty variable as unset', () => {
    // Act
    const config = loadConfig({ ...TABLES, PORT: '', SF_MAX_BODY_BYTES: '' }, { PORT: '4000' });

    // Assert
    expect(config.port).toBe(4000);
    expect(config.maxBodyBytes).toBe(1024 * 1024);
  });

  it('reports every invalid value at once', () => {
    // Act
    const problems = problemsOf({ ...TABLES, PORT: 'abc', SF_MAX_BODY_BYTES: '-1' });

    // Assert
    expect(problems).toHaveLength(2);
    expect(problems.some((p) => p.startsWith('PORT'))).toBe(true);
    expect(problems.some((p) => p.startsWith('SF_MAX_BODY_BYTES'))).toBe(true);
  });

  it('reports every missing table name, alongside other problems', () => {
    // Act
    const problems = problemsOf({ SF_SEED: 'maybe' });

    // Assert
    for (const name of Object.keys(TABLES)) expect(problems.some((p) => p.startsWith(name))).toBe(true);
    expect(problems.some((p) => p.startsWith('SF_SEED'))).toBe(true);
    expect(problems).toHaveLength(Object.keys(TABLES).length + 1);
  });

  it.each([
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['SF_MAX_BODY_BYTES', '0'],
    ['SF_MAX_BODY_BYTES', String(10 * 1024 * 1024 + 1)],
    ['SF_IP_RATE_LIMIT', '0'],
    ['SF_AUTH_CACHE_TTL', '3601'],
    ['SF_AUTH_CACHE_TTL', '-5'],
    ['POWERTOOLS_LOG_LEVEL', 'VERBOSE'],
    ['SF_SEED', 'yes'],
    ['SF_TABLE_ACCOUNTS', 'ab'],
  ])('rejects %s=%s, naming the variable', (name, value) => {
    // Act
    const problems = problemsOf({ ...TABLES, [name]: value });

    // Assert
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}: `));
  });

  it('lists the problems in the error message too', () => {
    // Act
    const act = () => loadConfig({ ...TABLES, PORT: 'abc', SF_IP_RATE_LIMIT: 'x' });

    // Assert
    expect(act).toThrow(ConfigError);
    expect(act).toThrow(/^Invalid configuration:\n/);
    expect(act).toThrow(/\n {2}- PORT: /);
    expect(act).toThrow(/\n {2}- SF_IP_RATE_LIMIT: /);
  });

  it('returns a frozen configuration, tables included', () => {
    // Arrange
    const config = loadConfig({ ...TABLES });

    // Act
    const mutate = () => {
      (config as { port: number }).port = 1;
    };
    const mutateTables = () => {
      (config.tables as Record<string, string>).accounts = 'other';
    };

    // Assert
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.tables)).toBe(true);
    expect(mutate).toThrow(TypeError);
    expect(mutateTables).toThrow(TypeError);
    expect(config.port).toBe(3000);
    expect(config.tables.accounts).toBe('prod-accounts');
  });

  it('ignores unrelated environment variables', () => {
    expect(() => loadConfig({ ...TABLES, HOME: '/root', PATH: '/usr/bin', AWS_REGION: 'eu-west-1' })).not.toThrow();
  });
});
