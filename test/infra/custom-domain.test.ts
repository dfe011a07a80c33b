// The optional custom domain (`-c sendflow:domainName=… -c sendflow:certificateArn=…`): a regional API Gateway
// domain whose `v1` base path maps to the v1 stage, so public links read https://<domain>/v1/… and outlive the
// execute-api host of a replaced api stack. Without the context nothing changes.
import { App, Validations } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { buildSendflow, CONTEXT_CERTIFICATE_ARN, CONTEXT_DOMAIN_NAME, settingsFromContext } from '../../lib/app';
import { outputNames } from '../../lib/outputs';
import { only, synthSendflow, TEST_CONTEXT } from './synth';

const DOMAIN = 'api.example.com';
const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/abc';
const withDomain = { [CONTEXT_DOMAIN_NAME]: DOMAIN, [CONTEXT_CERTIFICATE_ARN]: CERTIFICATE };

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

function publicUrl(api: Template): unknown {
  const functions = Object.values(api.findResources('AWS::Lambda::Function') as Resources);
  const urls = functions
    .map((fn) => (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables)
    .map((variables) => variables?.SF_PUBLIC_URL)
    .filter((url) => url !== undefined);
  // The API function and the public function (the API code for unauthenticated routes: unsubscribe, confirmation).
  expect(urls).toHaveLength(2);
  expect(urls[1]).toEqual(urls[0]);
  return urls[0];
}

function settings(context: Record<string, unknown>) {
  return settingsFromContext(new App({ context }));
}

describe('with a custom domain', () => {
  const { api } = synthSendflow(withDomain);

  it('creates a regional domain with TLS 1.2 and the given certificate', () => {
    expect(only(api, 'AWS::ApiGateway::DomainName').properties).toMatchObject({
      DomainName: DOMAIN,
      RegionalCertificateArn: CERTIFICATE,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
  });

  it('maps the base path v1 to the v1 stage, so https://<domain>/v1/<route> reaches every route', () => {
    const domain = only(api, 'AWS::ApiGateway::DomainName').id;
    const restApi = only(api, 'AWS::ApiGateway::RestApi').id;
    const stage = only(api, 'AWS::ApiGateway::Stage').id;
    expect(only(api, 'AWS::ApiGateway::BasePathMapping').properties).toEqual({
      DomainName: { Ref: domain },
      RestApiId: { Ref: restApi },
      Stage: { Ref: stage },
      BasePath: 'v1',
    });
  });

  it('puts the domain in public links (List-Unsubscribe, confirmation)', () => {
    expect(publicUrl(api)).toBe(`https://${DOMAIN}/v1`);
  });

  it('outputs the DNS target of the domain and its hosted zone', () => {
    const domain = only(api, 'AWS::ApiGateway::DomainName').id;
    const outputs = api.findOutputs('*') as Record<string, { Value: unknown }>;
    expect(outputs[outputNames.customDomain.target]?.Value).toEqual({
      'Fn::GetAtt': [domain, 'RegionalDomainName'],
    });
    expect(outputs[outputNames.customDomain.hostedZoneId]?.Value).toEqual({
      'Fn::GetAtt': [domain, 'RegionalHostedZoneId'],
    });
  });

  it('passes cdk-nag', () => {
    const app = new App({ context: { ...TEST_CONTEXT, ...withDomain }, builtinCloudFormationValidation: false });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    buildSendflow(app);
    expect(() => app.synth()).not.toThrow();
  });
});

describe('without a custom domain', () => {
  const { api } = synthSendflow();

  it('creates no domain, no mapping and no domain outputs', () => {
    api.resourceCountIs('AWS::ApiGateway::DomainName', 0);
    api.resourceCountIs('AWS::ApiGateway::BasePathMapping', 0);
    const outputs = Object.keys(api.findOutputs('*'));
    expect(outputs).not.toContain(outputNames.customDomain.target);
    expect(outputs).not.toContain(outputNames.customDomain.hostedZoneId);
  });

  it('keeps public links on the execute-api host', () => {
    expect(JSON.stringify(publicUrl(api))).toContain('.execute-api.');
  });
});

describe('custom domain context', () => {
  it('accepts deep and hyphenated hostnames', () => {
    const domainName = 'links-eu.mail2.example.co.uk';
    expect(settings({ ...withDomain, [CONTEXT_DOMAIN_NAME]: domainName }).customDomain?.domainName).toBe(domainName);
  });

  it('is read together, the hostname lowercased', () => {
    expect(
      settings({ [CONTEXT_DOMAIN_NAME]: 'API.Example.com', [CONTEXT_CERTIFICATE_ARN]: CERTIFICATE }).customDomain,
    ).toEqual({ domainName: DOMAIN, certificateArn: CERTIFICATE });
    expect(settings({}).customDomain).toBeUndefined();
  });

  it('needs both values or neither', () => {
    expect(() => settings({ [CONTEXT_DOMAIN_NAME]: DOMAIN })).toThrow(/sendflow:certificateArn/);
    expect(() => settings({ [CONTEXT_CERTIFICATE_ARN]: CERTIFICATE })).toThrow(/sendflow:domainName/);
  });

  it.each([
    'localhost',
    'https://api.example.com',
    'api.example.com/v1',
    '-api.example.com',
    'api..example.com',
    'api_1.example.com',
    'api.example.com:443',
    '192.0.2.1',
    '*.example.com',
    `${'a'.repeat(64)}.example.com`,
    '',
  ])('rejects the domain name %j', (domainName) => {
    expect(() => settings({ ...withDomain, [CONTEXT_DOMAIN_NAME]: domainName })).toThrow(/sendflow:domainName/);
  });

  it.each([
    'abc',
    'arn:aws:iam::123456789012:server-certificate/abc',
    'arn:aws:acm:eu-west-1:12345:certificate/abc',
    'arn:aws:acm:eu-west-1:123456789012:certificate/',
    'arn:aws:acm::123456789012:certificate/abc',
  ])('rejects the certificate ARN %j', (certificateArn) => {
    expect(() => settings({ ...withDomain, [CONTEXT_CERTIFICATE_ARN]: certificateArn })).toThrow(
      /sendflow:certificateArn/,
    );
  });

  it('accepts ACM ARNs of other partitions', () => {
    const arn = 'arn:aws-cn:acm:cn-north-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
    expect(settings({ ...withDomain, [CONTEXT_CERTIFICATE_ARN]: arn }).customDomain?.certificateArn).toBe(arn);
  });
});
