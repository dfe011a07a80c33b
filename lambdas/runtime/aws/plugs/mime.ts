// The MIME parser plug (the inbound function): received messages parsed in a worker thread of the function,
// time-boxed by SF_INBOUND_PARSE_SECONDS (the stack sets it well below the function's time-out), so a hostile
// message ends as a partial email within the budget instead of taking the invocation to its time-out.
import { parseThreadModule } from '../../../adapters/mime/parse-thread-module';
import { ThreadMimeParser } from '../../../adapters/mime/thread-mime-parser';
import type { AwsPlug } from '../services';

/** The parse thread's heap ceiling, within the function's 1,024 MB (the message and its result live outside it). */
export const LAMBDA_PARSE_HEAP_MB = 512;

export const mimeParser: AwsPlug = {
  requires: () => [],
  build: ({ config }) => ({
    mimeParser: new ThreadMimeParser({
      ...parseThreadModule(),
      budgetMs: config.inboundParseMs,
      maxHeapMb: LAMBDA_PARSE_HEAP_MB,
    }),
  }),
};
