// The CDK app (cdk.json runs it with tsx). cdk-nag's AwsSolutions checks run on every synth; violations
// fail it. SKIP_BUNDLING=1 synthesizes without running esbuild (faster, same templates but asset hashes).
// `-c sendflow:stage=NAME` picks the deployment stage (default prod; lib/app.ts, lib/outputs.ts).
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildSendflow } from '../lib/app';

const app = new App();
// The CLI passes aws:cdk:bundling-stacks=["**"], which overrides constructor context; setContext wins.
if (process.env.SKIP_BUNDLING === '1') app.node.setContext('aws:cdk:bundling-stacks', []);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
buildSendflow(app);
app.synth();
