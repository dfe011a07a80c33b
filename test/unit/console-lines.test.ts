// Unit tests of the local runtime's console (lambdas/runtime/local/console-lines.ts and console-logger.ts): on a
// terminal one short line per API request and per webhook attempt, warnings yellow and errors red, no JSON and
// no stack trace; JSON lines (the AWS shape, unchanged) when stdout is not a terminal or SF_LOG_FORMAT=json.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PowertoolsTelemetry } from '../../lambdas/adapters/telemetry/powertools-telemetry';
import type { AttemptReport } from '../../lambdas/app/telemetry';
import { consoleColors, logFormatFor, renderLogLine } from '../../lambdas/runtime/local/console-lines';
import { createConsoleLogger } from '../../lambdas/runtime/local/console-logger';
import { createLogger } from '../../lambdas/runtime/logger';

const RED = '\x1b[31m';
const YELLOW = '\x1b[33m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';
const plain = { color: false };
const colored = { color: true };
const at = '2026-12-07T19:12:24.480Z';

const request = {
  level: 'DEBUG',
  message: 'api request',
  timestamp: at,
  service: 'sendflow',
  route: 'sendEmail',
  method: 'POST',
  status: 200,
  duration_ms: 12,
  request_id: 'b1c2',
  account_id: 'acct_1',
};

const attempt = {
  level: 'DEBUG',
  message: 'webhook attempt',
  timestamp: at,
  service: 'sendflow',
  delivery_id: 'dlv_1',
  webhook_id: 'wh_01J9',
  account_id: 'acct_1',
  mode: 'test',
  event_type: 'email.delivered',
  attempt: 1,
  kind: 'automatic',
  outcome: 'succeeded',
  error_class: null,
  status_code: 200,
  duration_ms: 34,
  error: null,
  delivery_status: 'succeeded',
  recorded: true,
};

describe('renderLogLine', () => {
  // The time is the machine's: pinned here so the lines read the same on any machine.
  let zone: string | undefined;
  beforeEach(() => {
    zone = process.env.TZ;
    process.env.TZ = 'UTC';
  });
  afterEach(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it("shows the time in the machine's time zone", () => {
    // Arrange
    process.env.TZ = 'Asia/Kolkata';

    // Act
    const line = renderLogLine(request, plain);

    // Assert
    expect(line).toBe('00:42:24 POST /v1/emails 200 12 ms');
  });

  it('renders an API request as its method, public path, status and duration', () => {
    // Act
    const line = renderLogLine(request, plain);

    // Assert
    expect(line).toBe('19:12:24 POST /v1/emails 200 12 ms');
  });

  it("names a route by its path template (never the request's own path: a link's token is in it)", () => {
    // Act
    const lines = [
      renderLogLine({ ...request, route: 'getEmail', method: 'GET', status: 404, duration_ms: 3 }, plain),
      renderLogLine({ ...request, route: 'unmatched', method: 'GET', status: 404, duration_ms: 1 }, plain),
    ];

    // Assert
    expect(lines).toEqual(['19:12:24 GET /v1/emails/{id} 404 3 ms', '19:12:24 GET (no route) 404 1 ms']);
  });

  it('colours a 4xx request yellow and a 5xx red, the time dim', () => {
    // Act
    const ok = renderLogLine(request, colored);
    const refused = renderLogLine({ ...request, level: 'INFO', status: 422 }, colored);
    const failed = renderLogLine({ ...request, level: 'INFO', status: 500 }, colored);

    // Assert
    expect(ok).toBe(`${DIM}19:12:24${RESET} POST /v1/emails 200 12 ms`);
    expect(refused).toBe(`${DIM}19:12:24${RESET} ${YELLOW}POST /v1/emails 422 12 ms${RESET}`);
    expect(failed).toBe(`${DIM}19:12:24${RESET} ${RED}POST /v1/emails 500 12 ms${RESET}`);
  });

  it('renders a webhook attempt as the webhook, the attempt, its status, duration and event', () => {
    // Act
    const line = renderLogLine(attempt, plain);

    // Assert
    expect(line).toBe('19:12:24 → wh_01J9 attempt 1 200 34 ms email.delivered');
  });

  it('renders a failed attempt in red with its error and what happens next', () => {
    // Arrange
    const failed = {
      ...attempt,
      level: 'INFO',
      attempt: 2,
      outcome: 'failed',
      error_class: 'http_5xx',
      status_code: 503,
      error: 'HTTP 503',
      delivery_status: 'pending',
    };
    const timedOut = {
      ...failed,
      attempt: 5,
      error_class: 'timeout',
      status_code: null,
      duration_ms: 10_000,
      error: 'timed out after 10000 ms',
      delivery_status: 'failed',
    };

    // Act
    const retried = renderLogLine(failed, colored);
    const last = renderLogLine(timedOut, plain);
    const manual = renderLogLine({ ...attempt, kind: 'manual' }, plain);
    const test = renderLogLine({ ...attempt, kind: 'test', event_type: 'test' }, plain);

    // Assert
    expect(retried).toBe(
      `${DIM}19:12:24${RESET} ${RED}→ wh_01J9 attempt 2 503 34 ms email.delivered: HTTP 503 (will retry)${RESET}`,
    );
    expect(last).toBe(
      '19:12:24 → wh_01J9 attempt 5 timeout 10000 ms email.delivered: timed out after 10000 ms (delivery failed)',
    );
    expect(manual).toBe('19:12:24 → wh_01J9 attempt 1 200 34 ms email.delivered (manual retry)');
    expect(test).toBe('19:12:24 → wh_01J9 attempt 1 200 34 ms test (test event)');
  });

  it('renders a warning in yellow with its level, message and keys', () => {
    // Arrange
    const warning = {
      level: 'WARN',
      message: 'Inbound message not stored for an account',
      timestamp: at,
      service: 'sendflow',
      account_id: 'acct_1',
      reason: 'inbound quota exceeded',
      spool_id: 'sp_1',
    };

    // Act
    const line = renderLogLine(warning, colored);

    // Assert
    expect(line).toBe(
      `${DIM}19:12:24${RESET} ${YELLOW}WARN Inbound message not stored for an account account_id=acct_1 reason="inbound quota exceeded" spool_id=sp_1${RESET}`,
    );
  });

  it('renders an error in red with the error message and where it was thrown (from the working directory), without its stack', () => {
    // Arrange
    const error = {
      level: 'ERROR',
      message: 'reconciler failed',
      timestamp: at,
      service: 'sendflow',
      error: {
        name: 'Error',
        location: join(process.cwd(), 'lambdas/runtime/local/dynalite.ts:155'),
        message: 'The embedded DynamoDB is closing',
        stack: 'Error: The embedded DynamoDB is closing\n    at Object.request (/app/dynalite.ts:155:42)',
      },
    };

    // Act
    const line = renderLogLine(error, colored);

    // Assert
    expect(line).toBe(
      `${DIM}19:12:24${RESET} ${RED}ERROR reconciler failed: The embedded DynamoDB is closing (lambdas/runtime/local/dynalite.ts:155)${RESET}`,
    );
    expect(line).not.toContain('\n');
  });

  it('names the error class when it is not a plain Error', () => {
    // Act
    const line = renderLogLine(
      {
        level: 'ERROR',
        message: 'download failed',
        timestamp: at,
        service: 'sendflow',
        error: { name: 'TypeError', location: 'x.ts:1', message: 'boom', stack: 'TypeError: boom\n at x' },
      },
      plain,
    );

    // Assert
    expect(line).toBe('19:12:24 ERROR download failed: TypeError: boom (x.ts:1)');
  });
});

describe('logFormatFor and consoleColors', () => {
  it('writes lines for people on a terminal and JSON otherwise, SF_LOG_FORMAT deciding when set', () => {
    // Assert
    expect(logFormatFor(undefined, true)).toBe('pretty');
    expect(logFormatFor(undefined, false)).toBe('json');
    expect(logFormatFor('json', true)).toBe('json');
    expect(logFormatFor('pretty', false)).toBe('pretty');
  });

  it('colours a terminal unless NO_COLOR is set; FORCE_COLOR colours a pipe', () => {
    // Assert
    expect(consoleColors({}, true)).toBe(true);
    expect(consoleColors({}, false)).toBe(false);
    expect(consoleColors({ NO_COLOR: '1' }, true)).toBe(false);
    expect(consoleColors({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(consoleColors({ FORCE_COLOR: '0' }, true)).toBe(false);
  });
});

describe('the console logger', () => {
  let stdout: string[];
  let stderr: string[];
  beforeEach(() => {
    stdout = [];
    stderr = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string) => {
      stdout.push(String(chunk));
      return true;
    }) as typeof process.stdout.write);
    vi.spyOn(process.stderr, 'write').mockImplementation(((chunk: string) => {
      stderr.push(String(chunk));
      return true;
    }) as typeof process.stderr.write);
  });
  afterEach(() => vi.restoreAllMocks());

  const succeeded: AttemptReport = {
    deliveryId: 'dlv_1',
    webhookId: 'wh_1',
    accountId: 'acct_1',
    mode: 'test',
    eventType: 'email.delivered',
    attempt: 1,
    kind: 'automatic',
    requested: true,
    statusCode: 200,
    durationMs: 34,
    error: null,
    errorClass: null,
    deliveryStatus: 'succeeded',
    recorded: true,
  };

  it('shows every request and attempt at the default level (INFO) as one line each, errors on stderr, no JSON', () => {
    // Arrange
    const logger = createConsoleLogger({ logLevel: 'INFO' }, plain);
    const telemetry = new PowertoolsTelemetry({ logger, metricsService: null, routineLevel: 'info' });

    // Act
    telemetry.requested({ route: 'sendEmail', method: 'POST', status: 200, durationMs: 12, requestId: 'r1' });
    telemetry.attempted(succeeded);
    logger.error('reconciler failed', new Error('The embedded DynamoDB is closing'));

    // Assert
    expect(stdout.join('')).toMatch(
      /^\d\d:\d\d:\d\d POST \/v1\/emails 200 12 ms\n\d\d:\d\d:\d\d → wh_1 attempt 1 200 34 ms email\.delivered\n$/,
    );
    expect(stderr.join('')).toMatch(
      /^\d\d:\d\d:\d\d ERROR reconciler failed: The embedded DynamoDB is closing \([^()\n]+:\d+\)\n$/,
    );
  });

  it('keeps the AWS lines as they are: JSON, a successful request and attempt at DEBUG', () => {
    // Arrange
    const logger = createLogger({ logLevel: 'INFO' });
    const telemetry = new PowertoolsTelemetry({ logger, metricsService: null });

    // Act
    telemetry.requested({ route: 'sendEmail', method: 'POST', status: 200, durationMs: 12, requestId: 'r1' });
    telemetry.attempted(succeeded);
    telemetry.requested({ route: 'sendEmail', method: 'POST', status: 422, durationMs: 5, requestId: 'r2' });

    // Assert
    expect(stdout).toHaveLength(1);
    expect(JSON.parse(stdout[0] as string)).toEqual({
      level: 'INFO',
      message: 'api request',
      timestamp: expect.any(String),
      service: 'sendflow',
      route: 'sendEmail',
      method: 'POST',
      status: 422,
      duration_ms: 5,
      request_id: 'r2',
    });
  });
});
