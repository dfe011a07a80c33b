// Port: the spans a send makes (the API request, each event it causes, each webhook delivery attempt), for
// operators' OpenTelemetry backends and for the customer's own tracing, which a webhook request's `traceparent`
// joins. Contexts travel as the compact `trace` string (domain/trace-context.ts) on stored items and messages.
// Tracing never fails or slows the work: a span's methods are synchronous and never throw.

/** Attribute values a span takes (ids, numbers, statuses: never secrets, URLs with tokens or bodies). */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** What a span is in OpenTelemetry's terms: the API request is `server`, a webhook request `client`. */
export type SpanKind = 'server' | 'client' | 'consumer' | 'internal';

export interface TraceSpan {
  /**
   * The compact context to carry to the work this span causes (its children's parent). With tracing off, the
   * parent given to `start` itself: a caller's trace still reaches the receiver, unchanged (W3C: forward it).
   */
  readonly trace: string | undefined;
  setAttributes(attributes: SpanAttributes): void;
  /** Ends the span; `error` marks it failed with that (short, secret-free) message. */
  end(error?: string): void;
}

export interface Tracing {
  /** Whether spans are recorded and exported (OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  readonly enabled: boolean;
  /** A span under `parent` (a compact context), or the root of a new trace when there is none. */
  start(name: string, parent: string | undefined, kind: SpanKind, attributes?: SpanAttributes): TraceSpan;
  /** Resolves once spans are recorded (the exporter is loaded); at once when off. Never rejects. */
  ready(): Promise<void>;
  /** Exports what has ended, within a short bound (the end of a Lambda invocation). Never rejects. */
  flush(): Promise<void>;
}

/** Records nothing and costs nothing: every span's context is its parent's, so a caller's trace passes through. */
export const noTracing: Tracing = {
  enabled: false,
  start: (_name, parent) => passThrough(parent),
  ready: () => Promise.resolve(),
  flush: () => Promise.resolve(),
};

const NO_PARENT: TraceSpan = { trace: undefined, setAttributes: () => {}, end: () => {} };

function passThrough(parent: string | undefined): TraceSpan {
  return parent === undefined ? NO_PARENT : { trace: parent, setAttributes: () => {}, end: () => {} };
}
