// The Tracing port on the OpenTelemetry SDK: spans batched in a bounded queue and exported over OTLP/HTTP (JSON).
// Loaded only when tracing is on (runtime/tracing.ts imports it dynamically), so a process without an endpoint
// never evaluates the SDK. Contexts are passed explicitly (no context manager): each span's parent is the compact
// `trace` its work carried. An export that fails or times out is counted and dropped, never retried into the
// work's time, and never thrown.
import {
  createTraceState,
  ROOT_CONTEXT as root,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace as traceApi,
} from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import type { SpanKind as PortSpanKind, SpanAttributes, TraceSpan, Tracing } from '../../app/tracing';
import { compactTrace, expandTrace } from '../../domain/trace-context';

export interface OtelTracingOptions {
  /** The OTLP/HTTP traces URL. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  /** Spans held for export at most; past it new spans are dropped (the SDK's bounded queue). */
  readonly maxQueueSize?: number;
  /** Between two exports of the queue, ms. */
  readonly scheduledDelayMs?: number;
  /** One export's time-out (the HTTP request), ms. */
  readonly exportTimeoutMs?: number;
  /** The longest `flush` waits (the end of a Lambda invocation), ms. */
  readonly flushTimeoutMs?: number;
}

/** What the exporter did: spans exported, spans whose export failed (dropped). */
export interface ExportCounts {
  exported: number;
  failed: number;
}

const KINDS: Record<PortSpanKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
};

/** Counts the outcome of every export; the SDK's processor drops a failed batch (no retry into later work). */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly counts: ExportCounts,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      this.inner.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) this.counts.exported += spans.length;
        else this.counts.failed += spans.length;
        done(result);
      });
    } catch (error) {
      this.counts.failed += spans.length;
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown().catch(() => {});
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.().catch(() => {}) ?? Promise.resolve();
  }
}

export class OtelTracing implements Tracing {
  readonly enabled = true;
  readonly counts: ExportCounts = { exported: 0, failed: 0 };
  private readonly provider: TracerProvider;
  private readonly tracer;
  private readonly flushTimeoutMs: number;

  constructor(options: OtelTracingOptions) {
    const exporter = new OTLPTraceExporter({
      url: options.url,
      headers: { ...options.headers },
      timeoutMillis: options.exportTimeoutMs ?? 3_000,
    });
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': options.serviceName }),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new CountingExporter(exporter, this.counts),
          maxQueueSize: options.maxQueueSize ?? 2_048,
          maxExportBatchSize: 512,
          scheduledDelayMillis: options.scheduledDelayMs ?? 1_000,
          exportTimeoutMillis: options.exportTimeoutMs ?? 3_000,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('sendflow');
    this.flushTimeoutMs = options.flushTimeoutMs ?? 500;
  }

  start(name: string, parent: string | undefined, kind: PortSpanKind, attributes?: SpanAttributes): TraceSpan {
    try {
      const carried = expandTrace(parent);
      const context = carried
        ? traceApi.setSpanContext(root, {
            traceId: carried.traceId,
            spanId: carried.spanId,
            traceFlags: carried.flags,
            isRemote: true,
            ...(carried.state ? { traceState: createTraceState(carried.state) } : {}),
          })
        : root;
      const span = this.tracer.startSpan(name, { kind: KINDS[kind], ...(attributes ? { attributes } : {}) }, context);
      return spanOf(span, carried?.state);
    } catch {
      // Never the work's failure: the parent passes through as it would with tracing off.
      return { trace: parent, setAttributes: () => {}, end: () => {} };
    }
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }

  async flush(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.flushTimeoutMs);
      timer.unref?.();
    });
    try {
      await Promise.race([this.provider.forceFlush({ timeoutMillis: this.flushTimeoutMs }).catch(() => {}), bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Exports what is queued and stops (a local runtime's stop). */
  async shutdown(): Promise<void> {
    await this.provider.shutdown().catch(() => {});
  }
}

function spanOf(span: Span, state: string | undefined): TraceSpan {
  const context = span.spanContext();
  const trace = compactTrace({
    traceId: context.traceId,
    spanId: context.spanId,
    flags: context.traceFlags,
    ...(state ? { state } : {}),
  });
  return {
    trace,
    setAttributes: (attributes) => {
      try {
        span.setAttributes(attributes);
      } catch {}
    },
    end: (error) => {
      try {
        if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        span.end();
      } catch {}
    },
  };
}
