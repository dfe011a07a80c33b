// CloudWatch embedded metric format (EMF) lines, written by hand. Powertools Metrics gives every metric of a line
// the same dimension sets, so a metric counted in total and by a breakdown (ApiRequests by route and status) cost
// a line per set. The EMF specification lets one line carry several directives (`_aws.CloudWatchMetrics` is an
// array), each with its own dimension sets over the members of the line's root: one line can carry the total and
// the breakdown of a metric, and beside them, in a directive of their own, metrics that have no breakdown.
import type { MetricUnit } from '@aws-lambda-powertools/metrics';

export type EmfUnit = (typeof MetricUnit)[keyof typeof MetricUnit];

/** The most values one metric may carry in one line (the EMF specification's limit, as Powertools keeps it). */
export const MAX_VALUES_PER_METRIC = 100;

type Dimensions = Readonly<Record<string, string>>;
type Values = Map<string, { readonly unit: EmfUnit; readonly values: number[] }>;

interface Directive {
  readonly Namespace: string;
  readonly Dimensions: string[][];
  readonly Metrics: { Name: string; Unit: EmfUnit }[];
}

interface Line {
  readonly root: Record<string, string | number | number[]>;
  readonly directives: Directive[];
}

/**
 * An invocation's metric values, buffered, then written as few EMF lines as the specification allows. Values
 * recorded with the same breakdown form one directive; directives share a line unless a metric name or a
 * dimension with another value is already in it (the root holds one value per member). The metric names are
 * METRIC_NAMES (fewer than the 100 a directive may hold).
 */
export class EmfBuffer {
  private readonly groups = new Map<string, { readonly breakdown: Dimensions; readonly values: Values }>();

  /** `dimensions`: the dimensions of every series (the `service`). */
  constructor(
    private readonly namespace: string,
    private readonly dimensions: Dimensions,
  ) {}

  /** One value of `name` in the series of the base dimensions and, given a breakdown, also in that of base + it. */
  add(name: string, unit: EmfUnit, value: number, breakdown: Dimensions = {}): void {
    const key = JSON.stringify(breakdown);
    let group = this.groups.get(key);
    if (!group) {
      group = { breakdown, values: new Map() };
      this.groups.set(key, group);
    }
    const metric = group.values.get(name) ?? { unit, values: [] };
    metric.values.push(value);
    group.values.set(name, metric);
  }

  isEmpty(): boolean {
    return this.groups.size === 0;
  }

  /** The buffered values as EMF lines (JSON, no newline) stamped `timestamp` (epoch ms); empties the buffer. */
  drain(timestamp: number): string[] {
    const base = Object.keys(this.dimensions);
    const lines: Line[] = [];
    for (const { breakdown, values } of this.groups.values()) {
      const members: Dimensions = { ...this.dimensions, ...breakdown };
      const extra = Object.keys(breakdown);
      const sets = extra.length ? [base, [...base, ...extra]] : [base];
      for (const chunk of chunks(values)) {
        let line = lines.find((l) => fits(l, members, chunk));
        if (!line) {
          line = { root: {}, directives: [] };
          lines.push(line);
        }
        Object.assign(line.root, members);
        for (const [name, { values: v }] of chunk) line.root[name] = v.length === 1 ? (v[0] as number) : v;
        line.directives.push({
          Namespace: this.namespace,
          Dimensions: sets,
          Metrics: [...chunk].map(([Name, { unit }]) => ({ Name, Unit: unit })),
        });
      }
    }
    this.groups.clear();
    return lines.map(({ root, directives }) =>
      JSON.stringify({ _aws: { Timestamp: timestamp, CloudWatchMetrics: directives }, ...root }),
    );
  }
}

/** A group's values cut so that no metric carries more than MAX_VALUES_PER_METRIC in one line. */
function chunks(values: Values): Values[] {
  const longest = Math.max(...[...values.values()].map((m) => m.values.length));
  const out: Values[] = [];
  for (let start = 0; start < longest; start += MAX_VALUES_PER_METRIC) {
    const chunk: Values = new Map();
    for (const [name, { unit, values: v }] of values) {
      const part = v.slice(start, start + MAX_VALUES_PER_METRIC);
      if (part.length) chunk.set(name, { unit, values: part });
    }
    out.push(chunk);
  }
  return out;
}

/** Whether a directive of these dimension values and metrics can join the line: no member of the root changes. */
function fits(line: Line, members: Dimensions, chunk: Values): boolean {
  for (const [key, value] of Object.entries(members)) {
    if (key in line.root && line.root[key] !== value) return false;
  }
  for (const name of chunk.keys()) if (name in line.root) return false;
  return true;
}
