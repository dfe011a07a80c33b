// A Lambda function built from a lambdas/ entry point with the project's defaults: Node 22 on arm64, an
// ESM bundle made by the local esbuild, its own log group with retention and JSON logs filtered by level, a
// role without managed policies, and (unless it is a deploy-time helper) a `live` alias on a published version:
// what every invoker calls, and what CodeDeploy moves from one version to the next (lib/constructs/deployments.ts).
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { type IRole, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Alias,
  ApplicationLogLevel,
  Architecture,
  type IFunction,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** middy and Powertools are ESM, but some transitive dependencies still call require(). */
const REQUIRE_SHIM = "import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);";

/** The SDK's default credential chain, which the bundles replace (BUNDLING's esbuildArgs). */
export const CREDENTIAL_CHAIN = '@aws-sdk/credential-provider-node';

/** How every function is bundled; bench/bundles.ts and the bundle-size test build with exactly these. */
export const BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node22',
  mainFields: ['module', 'main'],
  banner: REQUIRE_SHIM,
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  // Ship the SDK versions we pinned and tested instead of whatever the runtime image carries.
  bundleAwsSDK: true,
  forceDockerBundling: false,
  // The SDK's default credential chain becomes its first link, the environment (where Lambda puts the role's
  // credentials): its other links and the STS and SSO clients they carry never answer on Lambda (about 100 KB of
  // every bundle). Relative to the repository root, where the CDK runs esbuild.
  esbuildArgs: { [`--alias:${CREDENTIAL_CHAIN}`]: './lambdas/runtime/aws/lambda-credentials.ts' },
} satisfies BundlingOptions;

export interface NodeFunctionProps {
  /** Entry file relative to the repository root, e.g. lambdas/runtime/aws/api.ts. */
  readonly entry: string;
  readonly description: string;
  /** POWERTOOLS_SERVICE_NAME: the `service` key of every log line. */
  readonly serviceName: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly logRetention: RetentionDays;
  /** Executions kept for this function alone (and its ceiling); none when omitted. */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Shell commands run once the bundle is built (aws-lambda-nodejs's afterBundling hook, run from the repository
   * root): a file the function loads beside its index.mjs, such as the inbound function's parse thread.
   */
  readonly afterBundling?: (inputDir: string, outputDir: string) => string[];
  /**
   * Another function's role, for a second function that runs the same code for other callers (the public
   * function, lib/api-stack.ts); it may also write this function's log group. A role of its own when omitted.
   */
  readonly role?: IRole;
  /**
   * Invoked through a `live` alias on a published version (default): deploys move the alias, by canary, and move
   * it back on an alarm. False for a deploy-time helper (a custom resource's handler), invoked as the function.
   */
  readonly liveAlias?: boolean;
}

/** The alias every invoker of a deployed function calls (CodeDeploy shifts it between versions). */
export const LIVE_ALIAS = 'live';

export class NodeFunction extends Construct {
  readonly handler: NodejsFunction;
  readonly role: IRole;
  readonly logGroup: LogGroup;
  /** The `live` alias (absent for a deploy-time helper). */
  readonly alias: Alias | undefined;
  /**
   * What invokers call: the `live` alias, so an SQS event source, an API integration or a schedule reaches the
   * version CodeDeploy has shifted traffic to; the function itself for a deploy-time helper.
   */
  readonly live: IFunction;

  constructor(scope: Construct, id: string, props: NodeFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention });
    // Our own role instead of AWSLambdaBasicExecutionRole: that managed policy lets the function write to
    // every log group in the account; this one may write to its own log group only.
    const role =
      props.role ??
      new Role(this, 'Role', {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `Execution role of ${props.serviceName}`,
      });
    this.logGroup.grantWrite(role);
    this.role = role;

    this.handler = new NodejsFunction(this, 'Function', {
      entry: `${repoRoot}/${props.entry}`,
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: `${repoRoot}/package-lock.json`,
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      role,
      logGroup: this.logGroup,
      // JSON, so Lambda filters lines by their level (docs/runbook.md, "Log levels"). Application lines from INFO:
      // the EMF metric lines carry no level and Lambda counts them as INFO, so a higher level would drop the
      // metrics. System lines at WARN: the START/END/REPORT lines of every invocation (INFO) are dropped; their
      // figures are Lambda's own metrics (Duration, Errors, Throttles), which no log level touches.
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      systemLogLevelV2: SystemLogLevel.WARN,
      // Off: no code is instrumented, so X-Ray would record only the invoke (logs and EMF metrics carry the rest).
      tracing: Tracing.DISABLED,
      environment: {
        ...props.environment,
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: props.afterBundling
        ? {
            ...BUNDLING,
            commandHooks: {
              beforeBundling: () => [],
              beforeInstall: () => [],
              afterBundling: props.afterBundling,
            },
          }
        : BUNDLING,
      // Every version is kept: the one before is what a rollback (CodeDeploy's, CloudFormation's, or a person's
      // `aws lambda update-alias`: docs/runbook.md, "Rolling back a release") points the alias back at.
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN },
    });
    this.alias =
      props.liveAlias === false
        ? undefined
        : new Alias(this, 'Live', { aliasName: LIVE_ALIAS, version: this.handler.currentVersion });
    this.live = this.alias ?? this.handler;

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Pinned to nodejs22.x on purpose: it is the Node line the project builds, tests and runs locally with ' +
        '(the node 22 devDependency), and it is supported by Lambda until 2027-04-30. Move with the toolchain.',
    });
  }
}

/** Function timeouts in one place. */
export const timeouts = {
  /** API Gateway gives up on a REST integration after 29 s; stop just before, so the log says why. */
  api: Duration.seconds(28),
  authorizer: Duration.seconds(10),
} as const;
