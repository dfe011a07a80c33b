// The notice sender's grant, simulated (issue 29 item 5): each function that raises notices may call
// ses:SendEmail on the sender's identity only with the stage's notice address as From (ses:FromAddress), so a bug
// or an injected address cannot make it mail as anyone else, tenants' verified domains included.
import { describe, expect, it } from 'vitest';
import { synthSendflow } from '../infra/synth';
import { deniedCalls } from './support/policy-check';
import { ACCOUNT, type BundledFunction, type CfnTemplate, REGION, Resolver, rolePolicies } from './support/template';

const FROM = 'notices@mail.example.com';
const identity = (name: string) => `arn:aws:ses:${REGION}:${ACCOUNT}:identity/${name}`;

/** The stack's functions by service name, with their roles' policies resolved to stand-in ARNs. */
function functions(context: Record<string, unknown>): Map<string, BundledFunction> {
  const template = synthSendflow(context).api.toJSON() as CfnTemplate;
  const resolver = new Resolver(template);
  const out = new Map<string, BundledFunction>();
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const env = ((resource.Properties?.Environment as { Variables?: Record<string, string> })?.Variables ??
      {}) as Record<string, unknown>;
    const service = env.POWERTOOLS_SERVICE_NAME;
    if (typeof service !== 'string') continue;
    const role = resource.Properties?.Role as unknown as { 'Fn::GetAtt': string[] };
    const roleId = String(role['Fn::GetAtt'][0]);
    out.set(service, {
      logicalId,
      service,
      entry: '',
      handlerExport: 'handler',
      environment: {},
      roleArn: `arn:aws:iam::${ACCOUNT}:role/${roleId}`,
      policies: rolePolicies(template, roleId, resolver),
      consumes: [],
      destinations: [],
    });
  }
  return out;
}

const send = (from: string, on = 'mail.example.com') => ({
  caller: 'k',
  operation: 'SendEmail',
  action: 'ses:SendEmail',
  resource: identity(on),
  context: { 'ses:FromAddress': from },
});

describe('IAM: the notice sender (sendflow:noticeFrom)', { timeout: 60_000 }, () => {
  it('allows SendEmail from the notice address and denies any other From, on every notifying function', async () => {
    const byService = functions({ 'sendflow:noticeFrom': { prod: FROM } });
    for (const service of ['sendflow-api', 'sendflow-delivery', 'sendflow-dispatcher', 'sendflow-ses-events']) {
      const fn = byService.get(service) as BundledFunction;

      expect(await deniedCalls(fn, [send(FROM)]), service).toEqual([]);
      for (const other of ['billing@mail.example.com', 'NOTICES@mail.example.com', 'notices@evil.example.net']) {
        expect(await deniedCalls(fn, [send(other)]), `${service} from ${other}`).toHaveLength(1);
      }
      // Another identity (a tenant's verified domain) is not the sender's, whatever the From.
      expect(await deniedCalls(fn, [send(FROM, 'tenant.example.org')]), service).toHaveLength(1);
    }
  });

  it('denies every notice send on a stage without a notice sender', async () => {
    const byService = functions({});
    for (const service of ['sendflow-api', 'sendflow-delivery', 'sendflow-dispatcher', 'sendflow-ses-events']) {
      expect(await deniedCalls(byService.get(service) as BundledFunction, [send(FROM)]), service).toHaveLength(1);
    }
  });
});
