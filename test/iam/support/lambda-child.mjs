// A Lambda-like host for one bundle, run in its own process: imports the bundle as the Node runtime would
// (a failed import is a failed boot), then runs each invocation the parent sends over IPC, one at a time.
import { pathToFileURL } from 'node:url';

const [entry, exportName] = process.argv.slice(2);

// A host started "later" (the reconciler finding overdue work) sees a shifted clock; nothing else changes.
const offset = Number(process.env.SF_IAM_TIER_CLOCK_OFFSET_MS ?? 0);
if (offset) {
  const RealDate = Date;
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offset;
    }
  };
}
let handler;
try {
  const module = await import(pathToFileURL(entry).href);
  handler = module[exportName];
  if (typeof handler !== 'function') throw new Error(`${entry} exports no function ${exportName}`);
  process.send({ type: 'ready' });
} catch (error) {
  process.send({ type: 'boot-failed', error: String(error?.stack ?? error) }, () => process.exit(1));
}

let sequence = 0;
process.on('message', async ({ id, event }) => {
  const context = {
    callbackWaitsForEmptyEventLoop: false,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:123456789012:function:${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    memoryLimitInMB: '512',
    awsRequestId: `req-${++sequence}`,
    logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logStreamName: 'stand-in',
    getRemainingTimeInMillis: () => 20_000,
    done() {},
    fail() {},
    succeed() {},
  };
  try {
    const result = await handler(event, context);
    process.send({ id, result: result ?? null });
  } catch (error) {
    process.send({ id, error: String(error?.stack ?? error) });
  }
});
