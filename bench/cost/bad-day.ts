// The bad day's endpoints (issue 29, item 3), as a pure model shared by bench:cost's receiver and bench:scale's
// simulated endpoints: answers take p50 300 ms / p99 3 s (a log-normal fitted to those two quantiles), 2% are a
// 5xx, 1% a 429 with `Retry-After: 5`, 0.5% never answer (the sender's 10 s time-out ends them); the rest are 200.
// Outcomes are drawn per request, independent of the endpoint and of the attempt number, from two low-discrepancy
// sequences (golden ratio, √2) over the request's index, so any window of n requests has the rates to within 1/n:
// the meter's counts are exact proportions rather than a die roll, and repeat run to run.

export type BadDayKind = 'ok' | 'server_error' | 'too_many' | 'hang';

export interface BadDayAnswer {
  readonly kind: BadDayKind;
  /** Milliseconds before the answer (none for a hang: the client gives up). */
  readonly latencyMs: number;
  /** HTTP status (0 for a hang). */
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
}

/** The figures. */
export const BAD_DAY = {
  p50Ms: 300,
  p99Ms: 3_000,
  serverErrorShare: 0.02,
  tooManyShare: 0.01,
  retryAfterSeconds: 5,
  hangShare: 0.005,
} as const;

/** The standard normal's 99th percentile: σ of the log-normal is ln(p99 / p50) / z99. */
const Z99 = 2.326_347_874;

/**
 * The standard normal's inverse CDF (Acklam's rational approximation, relative error under 1.2e-9), for p in (0, 1).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new Error(`normalQuantile needs p in (0, 1), got ${p}`);
  const a = [
    -39.696_830_286_653_76, 220.946_098_424_520_5, -275.928_510_446_968_7, 138.357_751_867_269, -30.664_798_066_147_16,
    2.506_628_277_459_239,
  ];
  const b = [
    -54.476_098_798_224_06, 161.585_836_858_040_9, -155.698_979_859_886_6, 66.801_311_887_719_72,
    -13.280_681_552_885_72,
  ];
  const c = [
    -0.007_784_894_002_430_293, -0.322_396_458_041_136_4, -2.400_758_277_161_838, -2.549_732_539_343_734,
    4.374_664_141_464_968, 2.938_163_982_698_783,
  ];
  const d = [0.007_784_695_709_041_462, 0.322_467_129_070_039_8, 2.445_134_137_142_996, 3.754_408_661_907_416];
  const low = 0.024_25;
  const tail = (q: number) =>
    ((((((c[0] as number) * q + (c[1] as number)) * q + (c[2] as number)) * q + (c[3] as number)) * q +
      (c[4] as number)) *
      q +
      (c[5] as number)) /
    (((((d[0] as number) * q + (d[1] as number)) * q + (d[2] as number)) * q + (d[3] as number)) * q + 1);
  if (p < low) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - low) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    (((((((a[0] as number) * r + (a[1] as number)) * r + (a[2] as number)) * r + (a[3] as number)) * r +
      (a[4] as number)) *
      r +
      (a[5] as number)) *
      q) /
    ((((((b[0] as number) * r + (b[1] as number)) * r + (b[2] as number)) * r + (b[3] as number)) * r +
      (b[4] as number)) *
      r +
      1)
  );
}

/** The answer time at quantile `u` of the log-normal through p50 and p99. */
export function badDayLatencyMs(u: number, p50Ms: number = BAD_DAY.p50Ms, p99Ms: number = BAD_DAY.p99Ms): number {
  const sigma = Math.log(p99Ms / p50Ms) / Z99;
  return p50Ms * Math.exp(sigma * normalQuantile(Math.min(1 - 1e-9, Math.max(1e-9, u))));
}

const PHI = (Math.sqrt(5) - 1) / 2;
const ROOT2 = Math.SQRT2 - 1;
const frac = (x: number) => x - Math.floor(x);

/** The answer to the `n`th request (0, 1, 2, …) an endpoint model receives. */
export function badDayAnswer(n: number): BadDayAnswer {
  const u = frac((n + 1) * PHI);
  const latencyMs = Math.round(badDayLatencyMs(frac((n + 1) * ROOT2 + 0.5 / 1024)));
  if (u < BAD_DAY.hangShare) return { kind: 'hang', latencyMs: Number.POSITIVE_INFINITY, status: 0, headers: {} };
  if (u < BAD_DAY.hangShare + BAD_DAY.tooManyShare) {
    return {
      kind: 'too_many',
      latencyMs,
      status: 429,
      headers: { 'retry-after': String(BAD_DAY.retryAfterSeconds) },
    };
  }
  if (u < BAD_DAY.hangShare + BAD_DAY.tooManyShare + BAD_DAY.serverErrorShare) {
    return { kind: 'server_error', latencyMs, status: 500, headers: {} };
  }
  return { kind: 'ok', latencyMs, status: 200, headers: {} };
}
