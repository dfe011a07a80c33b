// The synthesized API stack as the IAM tier sees it: every bundled function with its asset, its environment and
// its role's identity policies, CloudFormation tokens resolved to stand-in values (one fake account and region,
// names derived from logical ids and SSM parameter names), so calls recorded against the stand-ins can be
// checked against the same ARNs the policies name.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';
const PARTITION = 'aws';
/** API Gateway ids are ten lower-case alphanumerics. */
const REST_API_ID = 'sfapi12345';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, Json>;
}
export interface CfnTemplate {
  readonly Parameters?: Record<string, { Type: string; Default?: string }>;
  readonly Resources: Record<string, Resource>;
}

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: Statement[];
}
export interface Statement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string | string[];
  readonly Resource: string | string[];
  readonly Condition?: Record<string, Record<string, string | string[]>>;
}

export interface BundledFunction {
  readonly logicalId: string;
  /** POWERTOOLS_SERVICE_NAME, e.g. sendflow-api: how scenarios name a function. */
  readonly service: string;
  /** The bundle cdk synth built: asset.<hash>/index.mjs in the cloud assembly. */
  readonly entry: string;
  readonly handlerExport: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly roleArn: string;
  readonly policies: readonly { name: string; document: PolicyDocument }[];
  /** ARNs of the queues an event source mapping feeds it from (the Lambda service polls them with its role). */
  readonly consumes: readonly string[];
  /** ARNs of its async-invoke destinations (the Lambda service sends failed or finished events with its role). */
  readonly destinations: readonly string[];
}

/** Every bundled function of the stack, tokens resolved. */
export function bundledFunctions(
  template: CfnTemplate,
  assemblyDir: string,
  options: ResolverOptions = {},
): BundledFunction[] {
  const resolver = new Resolver(template, options);
  const resources = Object.entries(template.Resources);
  const found: BundledFunction[] = [];
  for (const [logicalId, resource] of resources) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const props = resource.Properties ?? {};
    const code = props.Code as { S3Key?: Json } | undefined;
    const key = typeof code?.S3Key === 'string' ? code.S3Key : undefined;
    const handler = String(props.Handler ?? '');
    const [file, handlerExport] = handler.split('.');
    const entry = key ? join(assemblyDir, `asset.${key.replace(/\.zip$/, '')}`, `${file}.mjs`) : '';
    // CDK's own helper functions (log retention, custom resources) are not ours: ours are ESM bundles.
    if (!entry || !existsSync(entry) || !handlerExport) continue;
    const variables = ((props.Environment as { Variables?: Json } | undefined)?.Variables ?? {}) as Record<
      string,
      Json
    >;
    const environment = Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [name, String(resolver.resolve(value))]),
    );
    const roleRef = props.Role as Json;
    const roleId = logicalIdOf(roleRef);
    found.push({
      logicalId,
      service: environment.POWERTOOLS_SERVICE_NAME ?? logicalId,
      entry,
      handlerExport,
      environment,
      roleArn: String(resolver.resolve(roleRef)),
      policies: roleId ? rolePolicies(template, roleId, resolver) : [],
      consumes: resources
        .filter(
          ([, r]) =>
            r.Type === 'AWS::Lambda::EventSourceMapping' &&
            functionBehind(template, r.Properties?.FunctionName ?? null) === logicalId,
        )
        .map(([, r]) => String(resolver.resolve(r.Properties?.EventSourceArn ?? null))),
      destinations: resources
        .filter(
          ([, r]) =>
            r.Type === 'AWS::Lambda::EventInvokeConfig' &&
            logicalIdOf(r.Properties?.FunctionName ?? null) === logicalId,
        )
        .flatMap(([, r]) => {
          const config = (r.Properties?.DestinationConfig ?? {}) as Record<string, { Destination?: Json }>;
          return Object.values(config).map((d) => String(resolver.resolve(d.Destination ?? null)));
        }),
    });
  }
  return found;
}

export function readTemplate(file: string): CfnTemplate {
  return JSON.parse(readFileSync(file, 'utf8')) as CfnTemplate;
}

/**
 * The function an invoker's FunctionName names: the function, or the one behind the `live` alias it invokes
 * (an event source mapping names `<function name>:live`, built from the alias's Ref).
 */
function functionBehind(template: CfnTemplate, value: Json): string | undefined {
  for (const [, id] of JSON.stringify(value).matchAll(/"(?:Ref|Fn::GetAtt)":\[?"(\w+)"/g)) {
    const resource = template.Resources[id ?? ''];
    if (resource?.Type === 'AWS::Lambda::Function') return id;
    if (resource?.Type === 'AWS::Lambda::Alias') return logicalIdOf(resource.Properties?.FunctionName ?? null);
  }
  return undefined;
}

/** The logical id a Ref or GetAtt points at. */
function logicalIdOf(value: Json): string | undefined {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    if (typeof value.Ref === 'string') return value.Ref;
    const getAtt = value['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return String(getAtt[0]);
    if (typeof getAtt === 'string') return getAtt.split('.')[0];
  }
  return undefined;
}

/** Inline policies of the role, and every AWS::IAM::Policy / ManagedPolicy attached to it. */
export function rolePolicies(template: CfnTemplate, roleId: string, resolver: Resolver) {
  const policies: { name: string; document: PolicyDocument }[] = [];
  const role = template.Resources[roleId];
  for (const inline of (role?.Properties?.Policies ?? []) as { PolicyName: Json; PolicyDocument: Json }[]) {
    policies.push({ name: String(inline.PolicyName), document: resolver.resolve(inline.PolicyDocument) as never });
  }
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy' && resource.Type !== 'AWS::IAM::ManagedPolicy') continue;
    const roles = (resource.Properties?.Roles ?? []) as Json[];
    if (!roles.some((r) => logicalIdOf(r) === roleId)) continue;
    policies.push({ name: id, document: resolver.resolve(resource.Properties?.PolicyDocument ?? null) as never });
  }
  return policies;
}

/** Stand-in value of an SSM parameter: a secret's ARN where the name says secret, else a table-safe name. */
function ssmStandIn(name: string): string {
  const safe = name.replace(/^\/+/, '').replace(/[^A-Za-z0-9_.-]/g, '.');
  if (/secret/i.test(name)) return `arn:${PARTITION}:secretsmanager:${REGION}:${ACCOUNT}:secret:${safe}-AbCdEf`;
  return safe;
}

export interface ResolverOptions {
  /** Where queue URLs point (the SQS client sends each request to its queue URL's host). */
  readonly sqsBaseUrl?: string;
}

/** Resolves Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select and Fn::Split to stand-in values. */
export class Resolver {
  constructor(
    private readonly template: CfnTemplate,
    private readonly options: ResolverOptions = {},
  ) {}

  resolve(value: Json): Json {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((v) => this.resolve(v));
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const [fn] = keys as [string];
      const arg = value[fn] as Json;
      switch (fn) {
        case 'Ref':
          return this.ref(String(arg));
        case 'Fn::GetAtt': {
          const [id, attr] = Array.isArray(arg) ? arg.map(String) : String(arg).split(/\.(.*)/);
          return this.getAtt(String(id), String(attr));
        }
        case 'Fn::Join': {
          const [sep, parts] = arg as [string, Json[]];
          return (this.resolve(parts) as Json[]).map(String).join(sep);
        }
        case 'Fn::Select': {
          const [index, list] = arg as [Json, Json];
          return (this.resolve(list) as Json[])[Number(this.resolve(index))] ?? null;
        }
        case 'Fn::Split': {
          const [sep, text] = arg as [string, Json];
          return String(this.resolve(text)).split(sep);
        }
        case 'Fn::Sub': {
          const [text, vars] = (Array.isArray(arg) ? arg : [arg, {}]) as [string, Record<string, Json>];
          return text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
            if (name in vars) return String(this.resolve(vars[name] as Json));
            const [id, attr] = name.split(/\.(.*)/);
            return String(attr ? this.getAtt(String(id), attr) : this.ref(name));
          });
        }
      }
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.resolve(v)]));
  }

  private ref(name: string): Json {
    const pseudo: Record<string, string> = {
      'AWS::AccountId': ACCOUNT,
      'AWS::Region': REGION,
      'AWS::Partition': PARTITION,
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': 'Sendflow-stand-in',
      'AWS::NoValue': '',
    };
    if (name in pseudo) return pseudo[name] as string;
    const parameter = this.template.Parameters?.[name];
    if (parameter) {
      if (parameter.Type.startsWith('AWS::SSM::Parameter::Value')) return ssmStandIn(String(parameter.Default));
      return parameter.Default ?? name;
    }
    const resource = this.template.Resources[name];
    if (!resource) throw new Error(`Ref to unknown ${name}`);
    switch (resource.Type) {
      case 'AWS::SQS::Queue':
        return `${this.options.sqsBaseUrl ?? `https://sqs.${REGION}.amazonaws.com`}/${ACCOUNT}/${this.nameOf(name, 'QueueName')}`;
      case 'AWS::ApiGateway::RestApi':
        return REST_API_ID;
      case 'AWS::SNS::Topic':
      case 'AWS::SecretsManager::Secret':
        return this.getAtt(name, 'Arn');
      // Bucket names are lower case (the SDK addresses a bucket by name in the path).
      case 'AWS::S3::Bucket':
        return name.toLowerCase();
      default:
        return this.nameOf(name, 'Name', 'RoleName', 'FunctionName', 'LogGroupName', 'TableName');
    }
  }

  private nameOf(id: string, ...properties: string[]): string {
    const props = this.template.Resources[id]?.Properties ?? {};
    for (const p of properties) if (props[p] !== undefined) return String(this.resolve(props[p] as Json));
    return id;
  }

  private getAtt(id: string, attr: string): Json {
    const resource = this.template.Resources[id];
    if (!resource) throw new Error(`GetAtt of unknown ${id}`);
    const arn = (service: string, rest: string, region = REGION) =>
      `arn:${PARTITION}:${service}:${region}:${ACCOUNT}:${rest}`;
    switch (`${resource.Type}.${attr}`) {
      case 'AWS::SQS::Queue.Arn':
        return arn('sqs', this.nameOf(id, 'QueueName'));
      case 'AWS::SQS::Queue.QueueName':
        return this.nameOf(id, 'QueueName');
      case 'AWS::SQS::Queue.QueueUrl':
        return this.ref(id);
      case 'AWS::IAM::Role.Arn':
        return arn('iam', `role/${this.nameOf(id, 'RoleName')}`, '');
      case 'AWS::Lambda::Function.Arn':
        return arn('lambda', `function:${this.nameOf(id, 'FunctionName')}`);
      case 'AWS::Logs::LogGroup.Arn':
        return arn('logs', `log-group:${this.nameOf(id, 'LogGroupName')}:*`);
      case 'AWS::Scheduler::ScheduleGroup.Arn':
        return arn('scheduler', `schedule-group/${this.nameOf(id, 'Name')}`);
      case 'AWS::SNS::Topic.TopicArn':
      case 'AWS::SNS::Topic.Arn':
        return arn('sns', this.nameOf(id, 'TopicName'));
      case 'AWS::SecretsManager::Secret.Arn':
        return arn('secretsmanager', `secret:${this.nameOf(id, 'Name')}-AbCdEf`);
      case 'AWS::S3::Bucket.Arn':
        return `arn:${PARTITION}:s3:::${this.ref(id)}`;
      case 'AWS::ApiGateway::RestApi.RootResourceId':
        return 'root000000';
      default: {
        const [, service = 'unknown', type = 'resource'] = resource.Type.split('::');
        return arn(service.toLowerCase(), `${type.toLowerCase()}/${id}`);
      }
    }
  }
}
