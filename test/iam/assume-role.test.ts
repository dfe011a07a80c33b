// AWS destinations' grant, simulated (iam-simulate) against the synthesized template's own policies: the delivery
// function and the API (test sends, manual retries) may assume a customer's role in any account only when the
// call carries an external id (sts:ExternalId), and assume nothing without one; nothing else gains sts:AssumeRole.
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { beforeAll, describe, expect, it } from 'vitest';
import { trustPolicyOf } from '../../lambdas/domain/webhooks/destination';
import { synthSendflow } from '../infra/synth';
import { ACCOUNT, type CfnTemplate, Resolver, rolePolicies } from './support/template';

const CUSTOMER_ROLE = 'arn:aws:iam::111122223333:role/sendflow-delivery';
const EXTERNAL_ID = 'sfx_abcdefghijklmnopqrstuvwxyz234567';

let template: CfnTemplate;
beforeAll(() => {
  template = synthSendflow().api.toJSON() as CfnTemplate;
});

/** Each function's service name and its role's identity policies, tokens resolved. */
function functions() {
  const resolver = new Resolver(template);
  return Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::Lambda::Function')
    .map((r) => {
      const props = r.Properties ?? {};
      const env = (props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      const role = props.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
      const roleId = role?.['Fn::GetAtt']?.[0];
      return {
        service: String(env.POWERTOOLS_SERVICE_NAME ?? ''),
        policies: roleId ? rolePolicies(template, roleId, resolver) : [],
      };
    })
    .filter((fn) => fn.service.startsWith('sendflow-'));
}

/**
 * The simulated AssumeRole of `roleArn` by `service`'s role. A role of Sendflow's own account with no trust policy
 * tests the identity policy alone; a customer's role in another account needs its trust policy too (`trust`).
 */
async function assumeRole(
  service: string,
  context: Record<string, string>,
  roleArn = `arn:aws:iam::${ACCOUNT}:role/any-role`,
  trust?: Record<string, unknown>,
): Promise<string> {
  const fn = functions().find((f) => f.service === service);
  if (!fn) throw new Error(`no function ${service}`);
  const response = await runSimulation(
    {
      identityPolicies: fn.policies.map((p) => ({ name: p.name, policy: p.document })) as never,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      request: {
        principal: `arn:aws:iam::${ACCOUNT}:role/${service}`,
        action: 'sts:AssumeRole',
        resource: { resource: roleArn, accountId: roleArn.split(':')[4] ?? ACCOUNT },
        contextVariables: context,
      },
      ...(trust ? { resourcePolicy: trust } : {}),
    },
    {},
  );
  return response.resultType === 'error' ? `error ${JSON.stringify(response.errors)}` : response.overallResult;
}

describe("sts:AssumeRole on customers' roles", () => {
  it.each(['sendflow-delivery', 'sendflow-api'])('%s: allowed with an external id, denied without', async (service) => {
    expect(await assumeRole(service, { 'sts:ExternalId': EXTERNAL_ID })).toBe('Allowed');
    expect(await assumeRole(service, {})).not.toBe('Allowed');
  });

  it.each(['sendflow-delivery', 'sendflow-api'])(
    "%s: assumes a customer's role (another account) whose trust policy names Sendflow and the external id",
    async (service) => {
      const trust = trustPolicyOf({ principalArn: `arn:aws:iam::${ACCOUNT}:root` }, EXTERNAL_ID);
      expect(await assumeRole(service, { 'sts:ExternalId': EXTERNAL_ID }, CUSTOMER_ROLE, trust)).toBe('Allowed');
      expect(await assumeRole(service, { 'sts:ExternalId': 'sfx_another_account' }, CUSTOMER_ROLE, trust)).not.toBe(
        'Allowed',
      );
      expect(await assumeRole(service, {}, CUSTOMER_ROLE, trust)).not.toBe('Allowed');
    },
  );

  it('is granted to no other function', async () => {
    const others = functions().filter(
      (f) => !['sendflow-delivery', 'sendflow-api', 'sendflow-public'].includes(f.service),
    );
    expect(others.length).toBeGreaterThan(3);
    for (const fn of others)
      expect([fn.service, await assumeRole(fn.service, { 'sts:ExternalId': EXTERNAL_ID })]).toEqual([
        fn.service,
        'ImplicitlyDenied',
      ]);
  });
});
