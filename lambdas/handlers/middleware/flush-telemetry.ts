// Publishes the invocation's buffered metrics when it ends, answered or failed (a Lambda may be frozen right
// after, and a buffered value would then be lost or land in a later invocation's line).
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Telemetry } from '../../app/telemetry';

export function flushTelemetry<TEvent = unknown, TResult = unknown, TContext extends Context = Context>(
  telemetry: Pick<Telemetry, 'flush'>,
): MiddlewareObj<TEvent, TResult, Error, TContext> {
  const flush = () => {
    telemetry.flush();
  };
  return { after: flush, onError: flush };
}
