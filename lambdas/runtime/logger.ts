// One Powertools logger per process: JSON lines, level from configuration, never the request bodies.
import { Logger } from '@aws-lambda-powertools/logger';
import type { Config } from './config';

export function createLogger(config: Pick<Config, 'logLevel'>, serviceName = 'sendflow'): Logger {
  return new Logger({ serviceName, logLevel: config.logLevel });
}
