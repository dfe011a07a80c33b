// Tracing's wiring, shared by both runtimes: off (noTracing: nothing loaded, a caller's traceparent passes
// through) unless the configuration names an OTLP endpoint; then the OpenTelemetry adapter, imported dynamically
// so that a function without an endpoint never evaluates the SDK (esbuild keeps it in the bundle, lazily).
// Until the import resolves (a cold start's first milliseconds) spans pass through as if off; the entry points wait
// for `ready()` before their first piece of work (handlers/middleware/flush-telemetry.ts, the local runtime's start).
import type { SpanAttributes, SpanKind, TraceSpan, Tracing } from '../app/tracing';
import { noTracing } from '../app/tracing';
import type { TracingConfig } from './config';

/** The OpenTelemetry adapter once loaded; its counts say what was exported. */
export interface LoadedTracing extends Tracing {
  readonly counts: { readonly exported: number; readonly failed: number };
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Between two exports of the queue, ms (the local runtime's and tests' choice; 1 s by default). */
  readonly scheduledDelayMs?: number;
  /** The longest a flush waits (the end of a Lambda invocation), ms. */
  readonly flushTimeoutMs?: number;
}

/** The tracing of a process: `config` absent, off. */
export function createTracing(
  config: TracingConfig | undefined,
  serviceName: string,
  options: TracingOptions = {},
): Tracing {
  if (!config) return noTracing;
  return new DeferredTracing(() =>
    import('../adapters/telemetry/otel-tracing').then(
      ({ OtelTracing }) =>
        new OtelTracing({
          url: config.url,
          headers: config.headers,
          serviceName: config.serviceName ?? serviceName,
          ...options,
        }),
    ),
  );
}

/** Tracing whose adapter is loaded on first use; until then (or if loading failed) spans pass through. */
export class DeferredTracing implements Tracing {
  readonly enabled = true;
  private loaded: LoadedTracing | undefined;
  private readonly loading: Promise<void>;
  /** Why loading failed, if it did (tracing then stays pass-through; the work is untouched). */
  loadError: unknown;

  constructor(load: () => Promise<LoadedTracing>) {
    this.loading = load().then(
      (tracing) => {
        this.loaded = tracing;
      },
      (error: unknown) => {
        this.loadError = error;
      },
    );
  }

  start(name: string, parent: string | undefined, kind: SpanKind, attributes?: SpanAttributes): TraceSpan {
    return (this.loaded ?? noTracing).start(name, parent, kind, attributes);
  }

  ready(): Promise<void> {
    return this.loading;
  }

  flush(): Promise<void> {
    return this.loaded?.flush() ?? Promise.resolve();
  }

  /** What the exporter did (zero before it is loaded). */
  get counts(): { readonly exported: number; readonly failed: number } {
    return this.loaded?.counts ?? { exported: 0, failed: 0 };
  }

  async shutdown(): Promise<void> {
    await this.loading;
    await this.loaded?.shutdown();
  }
}
