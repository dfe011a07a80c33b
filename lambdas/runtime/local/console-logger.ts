// The local runtime's logger on a terminal: the same Powertools Logger (levels, keys, child loggers, the compact
// formatter's keys), printing each line through renderLogLine instead of as JSON. Powertools serializes a log
// item to JSON in printLog, past any LogFormatter, so this subclass overrides printLog (and createLogger, its
// documented hook for subclasses, so a child logger prints the same way). AWS never builds one: the functions
// use createLogger (../logger.ts), whose JSON lines CloudWatch's metric filters and alarms read.
import { Logger, type LogItem } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions } from '@aws-lambda-powertools/logger/types';
import { CompactLogFormatter } from '../../adapters/telemetry/compact-log-formatter';
import type { Config } from '../config';
import { type ConsoleStyle, renderLogLine } from './console-lines';

export class ConsoleLogger extends Logger {
  constructor(
    options: ConstructorOptions,
    private readonly style: ConsoleStyle,
  ) {
    super(options);
  }

  /** Warnings and errors on stderr, the rest on stdout, as Powertools' own console methods write them. */
  protected override printLog(_logLevel: number, log: LogItem): void {
    log.prepareForPrint();
    // Through Powertools' replacer, as the JSON line would be: errors formatted, BigInts and cycles handled.
    const entry = JSON.parse(JSON.stringify(log.getAttributes(), this.getJsonReplacer())) as Record<string, unknown>;
    const stream =
      entry.level === 'WARN' || entry.level === 'ERROR' || entry.level === 'CRITICAL' ? 'stderr' : 'stdout';
    // A line Powertools prints from inside its constructor comes before this class's fields are set.
    process[stream].write(`${renderLogLine(entry, this.style ?? { color: false })}\n`);
  }

  protected override createLogger(options?: ConstructorOptions): ConsoleLogger {
    return new ConsoleLogger(options ?? {}, this.style);
  }
}

/** createLogger's logger (same level, service and keys), printing lines for people. */
export function createConsoleLogger(
  config: Pick<Config, 'logLevel'>,
  style: ConsoleStyle,
  serviceName = 'sendflow',
): ConsoleLogger {
  return new ConsoleLogger({ serviceName, logLevel: config.logLevel, logFormatter: new CompactLogFormatter() }, style);
}
