// The API request's span (docs/webhooks.md#traces): a server span under the caller's `traceparent` when it sent a
// valid one (W3C Trace Context), else the root of a new trace. The route handler gets it (RouteRequest.span) to
// carry its context into what the request stores (a send's emails, their events and deliveries). With tracing
// off, the span records nothing and its context is the caller's own, passed through. Never the path's values (a
// public link's token), headers or body in the span: the route template, the status, the account and ids.
import type { TraceSpan, Tracing } from '../../app/tracing';
import { noTracing } from '../../app/tracing';
import { compactTrace, parseTraceparent } from '../../domain/trace-context';
import type { ApiContext, ApiMiddleware } from '../http/context';
import { headerValue } from './caller';

export function traceRequest(tracing: Tracing = noTracing): ApiMiddleware {
  const spans = new WeakMap<object, TraceSpan>();
  const end: NonNullable<ApiMiddleware['after']> = (request) => {
    const span = spans.get(request);
    if (!span) return;
    const status = request.response?.statusCode ?? 502;
    const principal = request.context.sendflow?.principal;
    span.setAttributes({
      'http.response.status_code': status,
      ...(principal ? { 'sendflow.account.id': principal.accountId, 'sendflow.mode': principal.mode } : {}),
    });
    span.end(status >= 500 ? String(status) : undefined);
  };
  return {
    before: async (request) => {
      // A cold start's first request waits for the exporter to load (a few ms), so its span is recorded.
      if (tracing.enabled) await tracing.ready();
      const { headers } = request.event;
      const caller = parseTraceparent(headerValue(headers, 'traceparent'), headerValue(headers, 'tracestate'));
      const parent = caller ? compactTrace(caller) : undefined;
      const { httpMethod, resource } = request.event;
      const span = tracing.start(`${httpMethod} ${resource}`, parent, 'server', {
        'http.request.method': httpMethod,
        'http.route': resource,
        'sendflow.request.id': request.event.requestContext.requestId,
      });
      spans.set(request, span);
      (request.context as ApiContext).span = span;
    },
    after: end,
    onError: end,
  };
}
