// What the benchmarks share: aligned text tables, percentiles, positive whole numbers from the environment, and
// the local runtime's configuration they start it with.
import { type Config, loadConfig, localTableDefaults } from '../lambdas/runtime/config';

/** The local runtime on a free port, quiet, with no seeded account; `env` adds to or overrides that. */
export function benchConfig(env: Record<string, string>): Config {
  return loadConfig({ PORT: '0', SF_SEED: 'false', POWERTOOLS_LOG_LEVEL: 'SILENT', ...env }, localTableDefaults());
}

/** Prints `rows` under `head`, the first `leftColumns` columns left-aligned (labels), the rest right-aligned. */
export function printTable(head: readonly string[], rows: readonly (readonly string[])[], leftColumns = 1): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i < leftColumns ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  console.log(line(head));
  for (const row of rows) console.log(line(row));
}

/** `process.env[name]` as a positive whole number, `fallback` when unset; anything else is an error. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, not ${raw}`);
  return value;
}

/** Nearest-rank percentile, `percent` from 0 to 100; NaN for no values. */
export function percentile(values: readonly number[], percent: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((percent / 100) * sorted.length) - 1))] ?? Number.NaN;
}
