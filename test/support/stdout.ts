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

/** One EMF line's metric names, dimension sets and values, in a shape easy to compare (a line of one directive). */
export function emfSummary(line: Record<string, unknown>) {
  const aws = line._aws as {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  const [directive, more] = aws.CloudWatchMetrics;
  if (!directive) throw new Error('EMF line without a CloudWatchMetrics directive');
  if (more) throw new Error('EMF line with several directives: read it with emfSeries');
  return {
    namespace: directive.Namespace,
    dimensions: directive.Dimensions,
    metrics: Object.fromEntries(directive.Metrics.map((m) => [m.Name, { unit: m.Unit, value: line[m.Name] }])),
    dimensionValues: Object.fromEntries(directive.Dimensions.flat().map((d) => [d, line[d]])),
  };
}

/** One metric series as CloudWatch extracts it from EMF lines: its unit and every value, in line order. */
export interface EmfSeries {
  readonly unit: string;
  readonly values: number[];
}

/**
 * Reads EMF lines as CloudWatch does (the EMF specification): every directive of `_aws.CloudWatchMetrics`, every
 * dimension set of a directive, every metric of it, their values and dimension values taken from the line's root.
 * Returns the series keyed `Namespace/Metric{dim=value,...}` (the dimension set's order); throws on what
 * CloudWatch would reject (a referenced member missing from the root, a dimension value that is not a string, a
 * value that is not a number, more than 100 values).
 */
export function emfSeries(lines: readonly Record<string, unknown>[]): Record<string, EmfSeries> {
  const series: Record<string, EmfSeries> = {};
  for (const line of lines) {
    const aws = line._aws as {
      Timestamp: unknown;
      CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
    };
    if (typeof aws.Timestamp !== 'number') throw new Error('EMF line without a numeric _aws.Timestamp');
    for (const directive of aws.CloudWatchMetrics) {
      for (const set of directive.Dimensions) {
        const dims = set.map((name) => {
          const value = line[name];
          if (typeof value !== 'string') throw new Error(`dimension ${name} is ${JSON.stringify(value)}, not a string`);
          return `${name}=${value}`;
        });
        for (const { Name, Unit } of directive.Metrics) {
          const raw = line[Name];
          const values = Array.isArray(raw) ? raw : [raw];
          if (values.length > 100 || !values.every((v) => typeof v === 'number')) {
            throw new Error(`metric ${Name} has ${JSON.stringify(raw)}: not 1 to 100 numbers`);
          }
          const key = `${directive.Namespace}/${Name}{${dims.join(',')}}`;
          const found = series[key] ?? { unit: Unit, values: [] };
          found.values.push(...(values as number[]));
          series[key] = found;
        }
      }
    }
  }
  return series;
}
