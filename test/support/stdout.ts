// Captures what the process writes to stdout (Powertools' log lines and EMF lines) as parsed JSON lines, and
// keeps it off the test output.
import { vi } from 'vitest';

export interface CapturedStdout {
  /** Every JSON line written since capture began (other output is ignored). */
  lines(): Record<string, unknown>[];
  /** EMF lines (those with an `_aws` block). */
  emf(): Record<string, unknown>[];
  restore(): void;
}

export function captureStdout(): CapturedStdout {
  const written: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array) => {
    written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write);
  const lines = () =>
    written
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  return { lines, emf: () => lines().filter((line) => '_aws' in line), restore: () => spy.mockRestore() };
}

/** One EMF line's metric names, dimension sets and values, in a shape easy to compare. */
export function emfSummary(line: Record<string, unknown>) {
  const aws = line._aws as {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  const [directive] = aws.CloudWatchMetrics;
  if (!directive) throw new Error('EMF line without a CloudWatchMetrics directive');
  return {
    namespace: directive.Namespace,
    dimensions: directive.Dimensions,
    metrics: Object.fromEntries(directive.Metrics.map((m) => [m.Name, { unit: m.Unit, value: line[m.Name] }])),
    dimensionValues: Object.fromEntries(directive.Dimensions.flat().map((d) => [d, line[d]])),
  };
}
