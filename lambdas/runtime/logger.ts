// One Powertools logger per process: JSON lines in the compact shape (CompactLogFormatter), level from
// configuration (on AWS, Lambda's application log level wins: Powertools reads AWS_LAMBDA_LOG_LEVEL), never the
// request bodies.
import { Logger } from '@aws-lambda-powertools/logger';
import { CompactLogFormatter } from '../adapters/telemetry/compact-log-formatter';
import type { Config } from './config';

export function createLogger(config: Pick<Config, 'logLevel'>, serviceName = 'sendflow'): Logger {
  return new Logger({ serviceName, logLevel: config.logLevel, logFormatter: new CompactLogFormatter() });
}
