// Checks recorded calls against a function's identity policies with @cloud-copilot/iam-simulate, and finds the
// granted actions no recorded call used. Findings are sentences naming the function, action, resource and why.
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { Call } from './stand-ins';
import { ACCOUNT, type BundledFunction, type Statement } from './template';

/** Actions the Lambda service itself uses with the role (logs, traces, event source polling), not the code. */
const PLATFORM = /^(logs:CreateLogStream|logs:PutLogEvents|xray:PutTraceSegments|xray:PutTelemetryRecords)$/;
const EVENT_SOURCE = new Set([
  'sqs:ReceiveMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueUrl',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
]);

/** One line per recorded call the policies do not allow. */
export async function deniedCalls(fn: BundledFunction, calls: readonly Call[]): Promise<string[]> {
  const identityPolicies = fn.policies.map((p) => ({ name: p.name, policy: p.document }));
  const denied: string[] = [];
  const seen = new Set<string>();
  for (const call of calls) {
    const key = JSON.stringify([call.action, call.resource, call.context]);
    if (seen.has(key)) continue;
    seen.add(key);
    const response = await runSimulation(
      {
        identityPolicies: identityPolicies as never,
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        request: {
          principal: fn.roleArn,
          action: call.action,
          resource: { resource: call.resource, accountId: ACCOUNT },
          contextVariables: call.context ?? {},
        },
      },
      {},
    );
    const where = `${fn.service}: ${call.action} on ${call.resource} (${call.operation})`;
    if (response.resultType === 'error') {
      denied.push(`${where}: the simulation refused the request: ${JSON.stringify(response.errors)}`);
    } else if (response.overallResult !== 'Allowed') {
      const context = call.context && Object.keys(call.context).length ? ` with ${JSON.stringify(call.context)}` : '';
      denied.push(`${where}${context}: ${response.overallResult} by its role's identity policies`);
    }
  }
  return denied;
}

const list = (v: string | string[]) => (Array.isArray(v) ? v : [v]);

/** Granted actions (by resource pattern) that no recorded call of this function used. */
export function unusedGrants(fn: BundledFunction, calls: readonly Call[]): string[] {
  const unused: string[] = [];
  for (const { document } of fn.policies) {
    for (const statement of document.Statement as Statement[]) {
      if (statement.Effect !== 'Allow') continue;
      for (const action of list(statement.Action)) {
        if (PLATFORM.test(action)) continue;
        for (const pattern of list(statement.Resource)) {
          if (EVENT_SOURCE.has(action) && fn.consumes.includes(pattern)) continue;
          if (action === 'sqs:SendMessage' && fn.destinations.includes(pattern)) continue;
          const matcher = wildcard(pattern);
          const used = calls.some((c) => c.action === action && matcher.test(c.resource));
          if (!used) unused.push(`${fn.service}: ${action} on ${pattern} is granted but no call used it`);
        }
      }
    }
  }
  return unused;
}

/** An IAM resource pattern (* and ?) as a regular expression. */
function wildcard(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}
