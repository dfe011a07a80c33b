// Publishes the invocation's buffered metrics when it ends, answered or failed (a Lambda may be frozen right
// after, and a buffered value would then be lost or land in a later invocation's line), and exports its ended
// spans within a short bound (OtelTracing's flush: 500 ms at most; a failed or slow export is counted, never
// thrown). Before the first piece of work it waits for tracing to be loaded (a cold start's few ms), when on.
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Telemetry } from '../../app/telemetry';
import { noTracing, type Tracing } from '../../app/tracing';

export function flushTelemetry<TEvent = unknown, TResult = unknown, TContext extends Context = Context>(
  telemetry: Pick<Telemetry, 'flush'>,
  tracing: Pick<Tracing, 'enabled' | 'ready' | 'flush'> = noTracing,
): MiddlewareObj<TEvent, TResult, Error, TContext> {
  const flush = async () => {
    telemetry.flush();
    if (tracing.enabled) await tracing.flush().catch(() => {});
  };
  return {
    ...(tracing.enabled ? { before: () => tracing.ready() } : {}),
    after: flush,
    onError: flush,
  };
}
