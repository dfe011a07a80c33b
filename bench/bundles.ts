// `npm run bench:bundles`: how much each Lambda function weighs and how long its module takes to load. Builds
// every entry point exactly as `cdk synth` does (bench/bundle-build.ts), then imports each bundle in BENCH_RUNS
// (default 9) fresh `node` processes with the environment the synthesized stack gives that function (deploy-time
// values replaced by stand-ins, AWS endpoints pointed at a closed local port so an AWS call at import fails
// instead of leaving the machine). Prints size, import time (wall and CPU: median, min, max) and the heaviest
// packages per bundle; exits 1 when a bundle is over its limit or fails to load. Env: BENCH_RUNS, BENCH_TOP;
// BENCH_BASELINE=<another checkout> also builds that checkout's bundles and times them interleaved with these
// (before/after under the same load), BENCH_BASELINE_ENV=NAME=value,… adds variables to its processes only.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildSendflow, CONTEXT_UNMONITORED_STAGES } from '../lib/app';
import { CONTEXT_INBOUND } from '../lib/inbound-settings';
import { type BuiltBundle, buildBundle, bytesByPackage, FUNCTIONS } from './bundle-build';
import { positiveInt, printTable } from './report';

const RUNS = positiveInt('BENCH_RUNS', 9);
const TOP = positiveInt('BENCH_TOP', 4);
const run = promisify(execFile);

/** Deploy-time values (tokens) become readable stand-ins: a queue URL looks like a queue URL. */
function standIn(name: string): string {
  if (name === 'SF_PUBLIC_URL') return 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1';
  const table = /^SF_TABLE_(\w+)$/.exec(name)?.[1];
  if (table) return `${table.toLowerCase().replaceAll('_', '-')}-table`;
  if (name.endsWith('_URL')) return `https://sqs.eu-west-1.amazonaws.com/123456789012/${name.toLowerCase()}`;
  if (name.endsWith('_ARN')) return `arn:aws:test:eu-west-1:123456789012:${name.toLowerCase()}`;
  return `${name.toLowerCase()}-value`;
}

/**
 * Every function's environment in the synthesized app (bundling skipped), keyed by its service name; with inbound
 * mail on for the stage, so the inbound function is measured too.
 */
function environments(): Map<string, Record<string, string>> {
  const app = new App({
    // Measured, never deployed: declared unmonitored, as a stage without alarm subscribers must be.
    context: {
      'aws:cdk:bundling-stacks': [],
      [CONTEXT_INBOUND]: { prod: { region: 'eu-west-1' } },
      [CONTEXT_UNMONITORED_STAGES]: ['prod'],
    },
  });
  buildSendflow(app);
  const result = new Map<string, Record<string, string>>();
  for (const stack of app.node.children.filter((child): child is Stack => child instanceof Stack)) {
    for (const fn of Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))) {
      const variables = (fn.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>;
      const service = variables.POWERTOOLS_SERVICE_NAME;
      if (typeof service !== 'string') continue;
      result.set(
        service,
        Object.fromEntries(
          Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : standIn(name)]),
        ),
      );
    }
  }
  return result;
}

/** What the Lambda runtime adds, and a closed port for every AWS endpoint: nothing at import may call AWS. */
function lambdaEnvironment(service: string, variables: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    AWS_REGION: 'eu-west-1',
    AWS_LAMBDA_FUNCTION_NAME: service,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
    AWS_ACCESS_KEY_ID: 'AKIDSTANDIN',
    AWS_SECRET_ACCESS_KEY: 'stand-in',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...variables,
  };
}

/**
 * In a fresh process: from just before `import()` of the bundle to its handler being there, in wall-clock ms
 * and in CPU ms (user + system, all threads). CPU time is what a Lambda's small CPU share stretches, and it
 * moves less than wall time when other work shares the machine.
 */
const PROBE = `const t0 = performance.now();
const c0 = process.cpuUsage();
const mod = await import(process.argv[1]);
const cpu = process.cpuUsage(c0);
const ms = performance.now() - t0;
if (typeof mod.handler !== 'function') throw new Error('no handler export');
process.stdout.write(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000 }));`;

interface ImportTime {
  readonly ms: number;
  readonly cpuMs: number;
}

async function importTime(bundle: BuiltBundle, env: NodeJS.ProcessEnv): Promise<ImportTime> {
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', PROBE, pathToFileURL(bundle.file).href],
    { env, timeout: 30_000 },
  );
  return JSON.parse(stdout) as ImportTime;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const kb = (bytes: number) => (bytes / 1000).toFixed(1);

/** BENCH_BASELINE_ENV: `NAME=value` pairs, comma-separated, added to the baseline's processes only. */
function baselineVariables(): Record<string, string> {
  const raw = process.env.BENCH_BASELINE_ENV ?? '';
  return Object.fromEntries(
    raw
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

interface Timed {
  readonly bundle: BuiltBundle;
  readonly label: 'baseline' | 'current';
  readonly extra: Record<string, string>;
  readonly times: ImportTime[];
  failed?: string;
}

const stat = (runs: readonly ImportTime[], pick: (t: ImportTime) => number, of: (v: number[]) => number) =>
  runs.length ? of(runs.map(pick)).toFixed(0) : '-';
const p50 = (values: number[]) => median(values);
const min = (values: number[]) => Math.min(...values);
const max = (values: number[]) => Math.max(...values);

async function main(): Promise<void> {
  const out = mkdtempSync(join(tmpdir(), 'sendflow-bundles-'));
  try {
    const envs = environments();
    const baselineRoot = process.env.BENCH_BASELINE;
    const current = await Promise.all(FUNCTIONS.map((fn) => buildBundle(fn, join(out, fn.name))));
    const baseline = baselineRoot
      ? await Promise.all(FUNCTIONS.map((fn) => buildBundle(fn, join(out, `baseline-${fn.name}`), true, baselineRoot)))
      : [];
    const timed: Timed[] = [
      ...baseline.map((bundle) => ({ bundle, label: 'baseline' as const, extra: baselineVariables(), times: [] })),
      ...current.map((bundle) => ({ bundle, label: 'current' as const, extra: {}, times: [] })),
    ];
    // Round-robin, one process at a time, baseline and current interleaved: a load spike on the machine
    // touches every bundle alike.
    for (let i = 0; i < RUNS; i++) {
      for (const entry of timed) {
        const { fn } = entry.bundle;
        const variables = envs.get(fn.service);
        if (!variables) throw new Error(`no function with service ${fn.service} in the synthesized app`);
        try {
          entry.times.push(
            await importTime(entry.bundle, lambdaEnvironment(fn.service, { ...variables, ...entry.extra })),
          );
        } catch (error) {
          // Node prints the failing source line, the error (`Name [Class]: message`), its stack: keep the error.
          const stderr = String((error as { stderr?: unknown }).stderr ?? '').split('\n');
          entry.failed ??= stderr.find((line) => /^[\w$]+( \[\w+\])?: /.test(line)) ?? (error as Error).message;
        }
      }
    }
    const failures: string[] = [];
    for (const entry of timed) {
      if (entry.failed && entry.label === 'current')
        failures.push(`${entry.bundle.fn.name}: import failed: ${entry.failed}`);
      if (entry.failed && entry.label === 'baseline')
        console.error(`baseline ${entry.bundle.fn.name}: import failed: ${entry.failed}`);
    }
    const ofCurrent = timed.filter((t) => t.label === 'current');
    console.log(`Bundles as lib/constructs/node-function.ts builds them; import time over ${RUNS} fresh processes`);
    console.log(`(node ${process.version}, KB = 1000 bytes)\n`);
    printTable(
      ['function', 'bytes', 'KB', 'limit KB', 'import ms p50', 'min', 'max', 'CPU ms p50', 'min', 'within limit'],
      ofCurrent.map(({ bundle: { fn, bytes }, times }) => {
        const ok = bytes <= fn.maxBytes;
        if (!ok) failures.push(`${fn.name}: ${bytes} bytes, over its limit of ${fn.maxBytes}`);
        return [
          fn.name,
          String(bytes),
          kb(bytes),
          kb(fn.maxBytes),
          stat(times, (t) => t.ms, p50),
          stat(times, (t) => t.ms, min),
          stat(times, (t) => t.ms, max),
          stat(times, (t) => t.cpuMs, p50),
          stat(times, (t) => t.cpuMs, min),
          ok ? 'yes' : 'NO',
        ];
      }),
    );
    if (baselineRoot) {
      console.log(`\nBaseline ${baselineRoot} → this checkout, measured interleaved in the same run:\n`);
      printTable(
        ['function', 'bytes', '→', 'CPU ms p50', '→', 'CPU ms min', '→', 'wall ms p50', '→'],
        FUNCTIONS.map((fn) => {
          const [b, c] = (['baseline', 'current'] as const).map((label) =>
            timed.find((t) => t.label === label && t.bundle.fn.name === fn.name),
          );
          const bt = b?.times ?? [];
          const ct = c?.times ?? [];
          return [
            fn.name,
            String(b?.bundle.bytes ?? '-'),
            String(c?.bundle.bytes ?? '-'),
            stat(bt, (t) => t.cpuMs, p50),
            stat(ct, (t) => t.cpuMs, p50),
            stat(bt, (t) => t.cpuMs, min),
            stat(ct, (t) => t.cpuMs, min),
            stat(bt, (t) => t.ms, p50),
            stat(ct, (t) => t.ms, p50),
          ];
        }),
      );
    }
    console.log(`\nHeaviest packages per bundle (KB in the minified output; our own code is lambdas):\n`);
    printTable(
      ['function', ...Array.from({ length: TOP }, (_, i) => `#${i + 1}`)],
      [
        ...baseline.map((b) => ({ ...b, name: `${b.fn.name} (baseline)` })),
        ...current.map((b) => ({ ...b, name: b.fn.name })),
      ].map(({ name, metafile }) => [
        name,
        ...bytesByPackage(metafile)
          .slice(0, TOP)
          .map(([pkg, bytes]) => `${pkg} ${kb(bytes)}`),
      ]),
      TOP + 1,
    );
    if (failures.length) {
      console.error(`\n${failures.join('\n')}`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

await main();
