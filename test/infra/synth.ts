// Shared synthesis for the infrastructure tests: the real app assembly (lib/app.ts), so templates come from
// what deploys, with bundling skipped so each synth takes a fraction of a second once CDK is loaded.
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildSendflow, CONTEXT_UNMONITORED_STAGES, type SendflowSettings } from '../../lib/app';

export const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

/**
 * The stages the tests synthesize, declared unmonitored as a developer's stage would be in cdk.json: a stage with
 * nobody to page is refused otherwise (test/infra/paging.test.ts). A test of subscribers or of the refusal sets
 * sendflow:unmonitoredStages itself, which replaces this.
 */
export const UNMONITORED_TEST_STAGES = { [CONTEXT_UNMONITORED_STAGES]: ['prod', 'staging'] };

/** Bundling skipped, the test stages unmonitored: the context of every test app that builds Sendflow. */
export const TEST_CONTEXT = { ...SKIP_BUNDLING, ...UNMONITORED_TEST_STAGES };

/**
 * The app with bundling skipped and without CDK's built-in CloudFormation schema validation, whose wasm
 * engine costs seconds per test worker; the cdk-nag suite keeps it on, as `cdk synth` does.
 */
export function synthSendflow(context: Record<string, unknown> = {}, settings?: SendflowSettings) {
  const app = new App({ context: { ...TEST_CONTEXT, ...context }, builtinCloudFormationValidation: false });
  const stacks = buildSendflow(app, settings);
  return { app, stacks, data: Template.fromStack(stacks.data), api: Template.fromStack(stacks.api) };
}

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** Full resource path (below the stage) of every API Gateway resource, by logical id; the root is '/'. */
export function resourcePaths(template: Template): Map<unknown, string> {
  const resources = template.findResources('AWS::ApiGateway::Resource') as Resources;
  const paths = new Map<unknown, string>();
  const pathOf = (ref: unknown): string => {
    if (typeof ref === 'object' && ref !== null && 'Fn::GetAtt' in ref) return '/';
    const id = (ref as { Ref: string }).Ref;
    const resource = resources[id];
    if (!resource) throw new Error(`unknown resource ${id}`);
    const parent = pathOf(resource.Properties.ParentId);
    return `${parent === '/' ? '' : parent}/${resource.Properties.PathPart as string}`;
  };
  for (const id of Object.keys(resources)) paths.set(id, pathOf({ Ref: id }));
  return paths;
}

export interface MethodView {
  readonly logicalId: string;
  readonly path: string;
  readonly httpMethod: string;
  readonly properties: Record<string, unknown>;
}

/** Every API Gateway method with its full path. */
export function methods(template: Template): MethodView[] {
  const paths = resourcePaths(template);
  const found = template.findResources('AWS::ApiGateway::Method') as Resources;
  return Object.entries(found).map(([logicalId, method]) => {
    const resourceId = method.Properties.ResourceId as { Ref?: string };
    return {
      logicalId,
      path: resourceId.Ref ? (paths.get(resourceId.Ref) ?? '?') : '/',
      httpMethod: method.Properties.HttpMethod as string,
      properties: method.Properties,
    };
  });
}

/** The single resource of a type, with its logical id. */
export function only(template: Template, type: string): { id: string; properties: Record<string, unknown> } {
  const found = Object.entries(template.findResources(type) as Resources);
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  const [id, resource] = found[0] as [string, Resources[string]];
  return { id, properties: resource.Properties };
}

/**
 * The function (its logical id) that a value invokes: a Ref or GetAtt of the function, or of the alias in front of
 * it (a `live` alias, as every invoker uses: lib/constructs/deployments.ts), anywhere inside the value.
 */
export function invokedFunction(template: Template, value: unknown): string | undefined {
  const resources = template.toJSON().Resources as Resources;
  const referenced = [...JSON.stringify(value ?? null).matchAll(/"(?:Ref|Fn::GetAtt)":\[?"(\w+)"/g)].map((m) => m[1]);
  for (const id of referenced) {
    const resource = resources[id ?? ''];
    if (resource?.Type === 'AWS::Lambda::Function') return id;
    if (resource?.Type === 'AWS::Lambda::Alias') return (resource.Properties.FunctionName as { Ref?: string }).Ref;
  }
  return undefined;
}
