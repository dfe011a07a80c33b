// The end of a Lambda invocation (handlers/middleware/flush-telemetry.ts): metrics published and spans flushed
// whether the handler answered or threw, the first piece of work waits for tracing to be loaded, and a flush that
// fails never fails the invocation. Without tracing, nothing is awaited.
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { flushTelemetry } from '../../lambdas/handlers/middleware/flush-telemetry';

const context = {} as Context;

function fakes(flushFails = false) {
  const seen: string[] = [];
  let loaded = false;
  const telemetry = { flush: () => void seen.push('metrics') };
  const tracing = {
    enabled: true,
    ready: async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      loaded = true;
      seen.push('ready');
    },
    flush: async () => {
      seen.push('spans');
      if (flushFails) throw new Error('collector down');
    },
  };
  return { seen, telemetry, tracing, isLoaded: () => loaded };
}

describe('flushTelemetry', () => {
  it('waits for tracing before the work, then publishes metrics and flushes spans after it', async () => {
    const { seen, telemetry, tracing, isLoaded } = fakes();
    const handler = middy(async () => {
      seen.push(`work (loaded: ${isLoaded()})`);
      return 'ok';
    }).use(flushTelemetry(telemetry, tracing));

    await expect(handler({}, context)).resolves.toBe('ok');
    expect(seen).toEqual(['ready', 'work (loaded: true)', 'metrics', 'spans']);
  });

  it('flushes when the work throws, and a failed flush never replaces the answer or the error', async () => {
    const failing = fakes(true);
    const thrown = middy(async () => {
      throw new Error('batch failed');
    }).use(flushTelemetry(failing.telemetry, failing.tracing));
    await expect(thrown({}, context)).rejects.toThrow('batch failed');
    expect(failing.seen).toEqual(['ready', 'metrics', 'spans']);

    const answered = middy(async () => 'ok').use(flushTelemetry(failing.telemetry, failing.tracing));
    await expect(answered({}, context)).resolves.toBe('ok');
  });

  it('without tracing, publishes the metrics only', async () => {
    const seen: string[] = [];
    const handler = middy(async () => 'ok').use(flushTelemetry({ flush: () => void seen.push('metrics') }));
    await expect(handler({}, context)).resolves.toBe('ok');
    expect(seen).toEqual(['metrics']);
  });
});
