// W3C Trace Context as Sendflow carries it (domain/trace-context.ts): what a traceparent header may be, the compact
// form stored on items and messages, and the headers written again on a webhook request.
import { describe, expect, it } from 'vitest';
import {
  COMPACT_TRACE_MAX,
  compactTrace,
  expandTrace,
  formatTraceparent,
  parseTraceparent,
  TRACE_STATE_MAX,
  traceHeaders,
} from '../../lambdas/domain/trace-context';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const HEADER = `00-${TRACE}-${SPAN}-01`;

describe('parseTraceparent', () => {
  it('reads a valid version-00 header, with its tracestate', () => {
    expect(parseTraceparent(HEADER, 'congo=t61rcWkgMzE')).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      flags: 1,
      state: 'congo=t61rcWkgMzE',
    });
    expect(parseTraceparent(` ${HEADER} `)).toMatchObject({ traceId: TRACE, flags: 1 });
  });

  it.each([
    ['absent', undefined],
    ['upper-case hex', HEADER.toUpperCase()],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with more fields', `${HEADER}-extra`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['garbage', 'not a traceparent'],
  ])('ignores a header that is %s (a new trace starts)', (_why, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('accepts a later version with appended fields (W3C: read what it knows)', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-00-whatever`)).toMatchObject({ traceId: TRACE, flags: 0 });
  });

  it('drops a tracestate too long, unprintable or of more than 32 members, and keeps the trace', () => {
    expect(parseTraceparent(HEADER, 'a='.padEnd(TRACE_STATE_MAX + 1, 'x'))?.state).toBeUndefined();
    expect(parseTraceparent(HEADER, 'a=\u0001')?.state).toBeUndefined();
    expect(parseTraceparent(HEADER, Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','))?.state).toBeUndefined();
    expect(parseTraceparent(HEADER, 'a=1')?.state).toBe('a=1');
  });
});

describe('the compact form', () => {
  it('round-trips ids, flags and tracestate in 34 characters plus the state', () => {
    const context = { traceId: TRACE, spanId: SPAN, flags: 1, state: 'a=1,b=2' };
    const compact = compactTrace(context);
    expect(compact).toMatch(/^[A-Za-z0-9_-]{34} a=1,b=2$/);
    expect(expandTrace(compact)).toEqual(context);
    expect(compactTrace({ traceId: TRACE, spanId: SPAN, flags: 0 })).toHaveLength(34);
    expect(COMPACT_TRACE_MAX).toBe(34 + 1 + TRACE_STATE_MAX);
  });

  it('reads nothing from a malformed or zero value', () => {
    expect(expandTrace(undefined)).toBeUndefined();
    expect(expandTrace('short')).toBeUndefined();
    expect(expandTrace(compactTrace({ traceId: '0'.repeat(32), spanId: SPAN, flags: 1 }))).toBeUndefined();
  });
});

describe('traceHeaders', () => {
  it('writes traceparent, and tracestate only when there is one', () => {
    expect(traceHeaders({ traceId: TRACE, spanId: SPAN, flags: 1 })).toEqual({ traceparent: HEADER });
    expect(traceHeaders({ traceId: TRACE, spanId: SPAN, flags: 0, state: 'a=1' })).toEqual({
      traceparent: `00-${TRACE}-${SPAN}-00`,
      tracestate: 'a=1',
    });
    expect(traceHeaders(undefined)).toEqual({});
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, flags: 1 })).toBe(HEADER);
  });
});
