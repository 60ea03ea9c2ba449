/**
 * CDK entry point (`cdk.json`: `npx tsx infra/app.ts`): the demo app with cdk-nag's AwsSolutions
 * checks on every stack. Every suppression carries its reason next to the resource it covers.
 *
 * @see https://github.com/cdklabs/cdk-nag
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildDemoApp } from './demo-app.js';

const app = new App();
buildDemoApp(app);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
