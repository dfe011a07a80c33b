// The optional custom domain of the API: a regional API Gateway domain name whose `v1` base path maps to the
// v1 stage, so https://<domain>/v1/<route> is the same path as on the execute-api host (and to WAF).
import { CfnOutput, Stack } from 'aws-cdk-lib';
import { BasePathMapping, DomainName, EndpointType, type RestApi, SecurityPolicy } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Construct } from 'constructs';
import { STAGE } from '../../lambdas/manifest';
import { outputNames } from '../outputs';

export interface CustomDomainSettings {
  /** Lowercase hostname, e.g. api.example.com. */
  readonly domainName: string;
  /** ACM certificate covering domainName, in the stack's region (a regional endpoint needs that). */
  readonly certificateArn: string;
}

export interface ApiCustomDomainProps extends CustomDomainSettings {
  readonly api: RestApi;
}

export class ApiCustomDomain extends Construct {
  /** The public base URL: https://<domain>/v1, a literal, so functions can carry it without a dependency. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: ApiCustomDomainProps) {
    super(scope, id);
    const domain = new DomainName(this, 'Domain', {
      domainName: props.domainName,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn),
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    // Base path `v1` rather than an empty one: the public URL keeps the stage segment, so links, clients and
    // the WAF's path rules read the same on either host, and a later v2 stage can take its own base path.
    new BasePathMapping(this, 'V1', {
      domainName: domain,
      restApi: props.api,
      stage: props.api.deploymentStage,
      basePath: STAGE,
    });
    this.url = `https://${props.domainName}/${STAGE}`;
    // Outputs at stack level under their documented keys (lib/outputs.ts), like the api stack's others.
    const output = (name: string, value: string, description: string) =>
      new CfnOutput(Stack.of(this), name, { value, description }).overrideLogicalId(name);
    output(
      outputNames.customDomain.target,
      domain.domainNameAliasDomainName,
      `DNS target of ${props.domainName}: a CNAME, or a Route 53 alias with the hosted zone id output`,
    );
    output(
      outputNames.customDomain.hostedZoneId,
      domain.domainNameAliasHostedZoneId,
      `Route 53 hosted zone id of the ${props.domainName} target (alias records)`,
    );
  }
}
