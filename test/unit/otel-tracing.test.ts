// The OpenTelemetry adapter never breaks or slows the work (adapters/telemetry/otel-tracing.ts): an exporter whose
// endpoint fails or hangs costs a flush its bound at most, its spans are counted as failed, and spans keep the
// parent they were given. Tracing's wiring: off without an endpoint (nothing loaded, contexts pass through).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtelTracing } from '../../lambdas/adapters/telemetry/otel-tracing';
import { noTracing } from '../../lambdas/app/tracing';
import { compactTrace, expandTrace } from '../../lambdas/domain/trace-context';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { createTracing, DeferredTracing } from '../../lambdas/runtime/tracing';
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver';

const parent = compactTrace({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: 1 });

let otlp: OtlpReceiver;
beforeAll(async () => {
  otlp = await startOtlpReceiver();
});
afterAll(async () => {
  await otlp?.close();
});

const tracingTo = (url: string) =>
  new OtelTracing({
    url: `${url}/v1/traces`,
    headers: {},
    serviceName: 'unit',
    exportTimeoutMs: 300,
    flushTimeoutMs: 400,
  });

describe('OtelTracing', () => {
  it('exports a span under the given parent, and counts it exported', async () => {
    otlp.answer('ok');
    const tracing = tracingTo(otlp.url);
    const span = tracing.start('POST', parent, 'client', { 'sendflow.attempt': 2 });
    span.end();
    await tracing.flush();
    const [got] = await otlp.waitFor((spans) => spans.some((s) => s.attributes['sendflow.attempt'] === 2));
    expect(got).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentSpanId: '00f067aa0ba902b7' });
    expect(expandTrace(span.trace)?.spanId).toBe(got?.spanId);
    expect(tracing.counts).toEqual({ exported: 1, failed: 0 });
    await tracing.shutdown();
  });

  it.each(['fail', 'hang'] as const)(
    'an endpoint that answers %s: the flush returns within its bound, spans counted failed',
    async (kind) => {
      otlp.answer(kind);
      const tracing = tracingTo(otlp.url);
      for (let i = 0; i < 5; i++) tracing.start('POST', parent, 'client').end();
      const started = performance.now();
      await tracing.flush();
      expect(performance.now() - started).toBeLessThan(1_000);
      // The export ends (failed or timed out) in the background; the work was never held.
      await expect.poll(() => tracing.counts.failed, { timeout: 3_000 }).toBe(5);
      expect(tracing.counts.exported).toBe(0);
      otlp.answer('ok');
      await tracing.shutdown();
    },
  );

  it('an unreachable endpoint is a failed export, never a throw', async () => {
    const tracing = tracingTo('http://127.0.0.1:9');
    tracing.start('POST', undefined, 'server').end();
    await tracing.flush();
    await expect.poll(() => tracing.counts.failed, { timeout: 3_000 }).toBe(1);
    await tracing.shutdown();
  });
});

describe('createTracing', () => {
  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT (or with OTEL_SDK_DISABLED): a context passes through', () => {
    const off = loadConfig({}, localTableDefaults());
    expect(createTracing(off.tracing, 'x')).toBe(noTracing);
    const disabled = loadConfig(
      { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SDK_DISABLED: 'true' },
      localTableDefaults(),
    );
    expect(disabled.tracing).toBeUndefined();
    expect(noTracing.start('x', parent, 'internal').trace).toBe(parent);
    expect(noTracing.start('x', undefined, 'internal').trace).toBeUndefined();
  });

  it('reads the OTEL_* variables: the traces URL, headers and service name', () => {
    const config = loadConfig(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D,bad',
        OTEL_SERVICE_NAME: 'stage-a',
      },
      localTableDefaults(),
    );
    expect(config.tracing).toEqual({
      url: 'https://otlp.example.com/v1/traces',
      headers: { 'x-api-key': 'abc=' },
      serviceName: 'stage-a',
    });
    const traces = loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t.example.com/x' }, localTableDefaults());
    expect(traces.tracing?.url).toBe('https://t.example.com/x');
  });

  it('passes contexts through until the adapter is loaded, and stays so if loading fails', async () => {
    const failing = new DeferredTracing(() => Promise.reject(new Error('no SDK')));
    expect(failing.start('x', parent, 'internal').trace).toBe(parent);
    await failing.ready();
    expect(failing.loadError).toBeInstanceOf(Error);
    expect(failing.start('x', parent, 'internal').trace).toBe(parent);
    await failing.flush();
  });
});
