// Builds each Lambda function's bundle the way `cdk synth` does (esbuild with lib/constructs/node-function.ts's
// BUNDLING options, translated as aws-lambda-nodejs translates them), and says what each function may weigh.
// Shared by `npm run bench:bundles` and the bundle-size test, so neither can drift from what deploys.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, type BuildResult, build, type Format, type Metafile } from 'esbuild';
import { BUNDLING } from '../lib/constructs/node-function';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** 1 MB and 500 KB in decimal units: the stricter reading of the limits. */
const MB = 1_000_000;
const KB = 1_000;

export interface FunctionBundle {
  /** Short name, as the benchmark prints it. */
  readonly name: string;
  /** Entry point relative to the repository root, as the stack names it. */
  readonly entry: string;
  /** POWERTOOLS_SERVICE_NAME the stack gives the function: how its environment is found in the template. */
  readonly service: string;
  /** Largest minified bundle allowed, in bytes. */
  readonly maxBytes: number;
}

export const FUNCTIONS: readonly FunctionBundle[] = [
  // Every route and the dashboard, with the S3, SES, Scheduler, SQS and API Gateway clients they call: 1.1 MB since
  // issue 19's attachments and inbound reads passed 1 MB (its import time is measured in bench:bundles).
  { name: 'api', entry: 'lambdas/runtime/aws/api.ts', service: 'sendflow-api', maxBytes: 1_500 * KB },
  // Runs on every uncached request, in front of every route: the tightest budget.
  {
    name: 'authorizer',
    entry: 'lambdas/runtime/aws/authorizer.ts',
    service: 'sendflow-authorizer',
    maxBytes: 500 * KB,
  },
  { name: 'dispatcher', entry: 'lambdas/runtime/aws/dispatcher.ts', service: 'sendflow-dispatcher', maxBytes: MB },
  { name: 'delivery', entry: 'lambdas/runtime/aws/delivery.ts', service: 'sendflow-delivery', maxBytes: MB },
  { name: 'reconciler', entry: 'lambdas/runtime/aws/reconciler.ts', service: 'sendflow-reconciler', maxBytes: MB },
  { name: 'sender', entry: 'lambdas/runtime/aws/sender.ts', service: 'sendflow-sender', maxBytes: MB },
  { name: 'ses-events', entry: 'lambdas/runtime/aws/ses-events.ts', service: 'sendflow-ses-events', maxBytes: MB },
  // Synthesized only for a stage that receives email (sendflow:inbound), but always built and measured here.
  { name: 'inbound', entry: 'lambdas/runtime/aws/inbound.ts', service: 'sendflow-inbound', maxBytes: MB },
];

/** The options BUNDLING carries that esbuildOptions translates; a new one must be translated before it is used. */
const TRANSLATED = new Set([
  'format',
  'target',
  'mainFields',
  'banner',
  'minify',
  'sourceMap',
  'sourcesContent',
  'bundleAwsSDK',
  'forceDockerBundling',
  'esbuildArgs',
]);

/**
 * esbuild's build options for one entry point, flag for flag what aws-lambda-nodejs passes to the esbuild CLI
 * (`--bundle --platform=node --target --format --outfile=index.mjs --minify --sourcemap --sources-content
 * --external --banner:js --main-fields`).
 */
export function esbuildOptions(entry: string, outdir: string, root = repoRoot): BuildOptions {
  const untranslated = Object.keys(BUNDLING).filter((key) => !TRANSLATED.has(key));
  if (untranslated.length) {
    throw new Error(`bench/bundle-build.ts does not translate the bundling option(s) ${untranslated.join(', ')}`);
  }
  return {
    absWorkingDir: root,
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: BUNDLING.target,
    format: BUNDLING.format as Format,
    outfile: join(outdir, BUNDLING.format === 'esm' ? 'index.mjs' : 'index.js'),
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    sourcesContent: BUNDLING.sourcesContent,
    // bundleAwsSDK: no externals at all (aws-lambda-nodejs's default would be @aws-sdk/*).
    external: BUNDLING.bundleAwsSDK ? [] : ['@aws-sdk/*'],
    banner: { js: BUNDLING.banner },
    alias: aliases(BUNDLING.esbuildArgs, root),
    mainFields: BUNDLING.mainFields,
    metafile: true,
    logLevel: 'warning',
  };
}

/**
 * `--alias:<package>` CLI arguments as esbuild's `alias` option (the only esbuildArgs BUNDLING passes). A target
 * the checkout under `root` does not have (a baseline from before it) is left out: that checkout deployed without.
 */
function aliases(args: Readonly<Record<string, string>>, root: string): Record<string, string> {
  const alias: Record<string, string> = {};
  for (const [flag, value] of Object.entries(args)) {
    const name = /^--alias:(.+)$/.exec(flag)?.[1];
    if (!name) throw new Error(`bench/bundle-build.ts does not translate the esbuild argument ${flag}`);
    if (existsSync(join(root, value))) alias[name] = value;
  }
  return alias;
}

export interface BuiltBundle {
  readonly fn: FunctionBundle;
  /** The bundle Lambda loads (index.mjs), without its source map. */
  readonly bytes: number;
  readonly file: string;
  readonly metafile: Metafile;
}

/**
 * Builds one function's bundle into `outdir` (written to disk when `write`, else kept in memory), from the
 * sources under `root` (another checkout, for a before/after comparison; with its own node_modules).
 */
export async function buildBundle(
  fn: FunctionBundle,
  outdir: string,
  write = true,
  root = repoRoot,
): Promise<BuiltBundle> {
  const options = esbuildOptions(fn.entry, outdir, root);
  const result: BuildResult = await build({ ...options, write });
  const file = String(options.outfile);
  const bytes = write
    ? statSync(file).size
    : (result.outputFiles?.find((out) => out.path === file)?.contents.byteLength ?? Number.NaN);
  if (!result.metafile || Number.isNaN(bytes)) throw new Error(`esbuild reported no output for ${fn.entry}`);
  return { fn, bytes, file, metafile: result.metafile };
}

/** Bytes of the bundle by package (`@aws-sdk/client-sqs`, `zod`, …; our own code is `lambdas/`), largest first. */
export function bytesByPackage(metafile: Metafile): [string, number][] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = packageOf(input);
      totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].sort((a, b) => b[1] - a[1]);
}

function packageOf(input: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  if (match?.[1]) return match[1];
  return input.split('/')[0] ?? input;
}
