// The shape of every log line on AWS: Powertools' keys cut to what an operator reads. CloudWatch bills every
// byte ingested, and injectLambdaContext's keys (function name, ARN, memory, about 300 bytes a line) repeat
// what the log group and the function's configuration already say; the sampling rate is always 0 and the
// X-Ray id points at no trace (tracing is off). Level and an RFC 3339 timestamp stay: Lambda filters JSON
// logs by them (docs/runbook.md, "Log levels").
import { LogFormatter, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';

export class CompactLogFormatter extends LogFormatter {
  formatAttributes(attributes: UnformattedAttributes, additionalLogAttributes: LogAttributes): LogItem {
    const context = attributes.lambdaContext;
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        // The invocation, to put an invocation's lines together; a cold start said once, on its own lines.
        function_request_id: context?.awsRequestId,
        ...(context?.coldStart ? { cold_start: true } : {}),
      },
    }).addAttributes(additionalLogAttributes);
  }
}
