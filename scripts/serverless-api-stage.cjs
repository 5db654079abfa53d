/**
 * Stage settings of the REST API for `serverless package` and `serverless deploy`.
 *
 * The framework creates the stage through the StageName of its AWS::ApiGateway::Deployment and has
 * no option for the stage's throttling. That deployment's logical id changes with every deploy, so
 * `resources.extensions` cannot name it; this plugin merges `custom.apiStage` (properties of the
 * deployment's StageDescription, CloudFormation intrinsics allowed) into it once the framework has
 * compiled it. A new deployment on every deploy means the settings are applied on every deploy.
 */
'use strict';

class ApiStageSettings {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'before:package:finalize': () => this.applyStageSettings() };
  }

  applyStageSettings() {
    const settings = this.serverless.service.custom?.apiStage;
    if (!settings || typeof settings !== 'object') return;
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    const deployments = Object.values(resources).filter((resource) => resource.Type === 'AWS::ApiGateway::Deployment');
    if (deployments.length === 0) {
      throw new Error('custom.apiStage is set, but the stack has no API Gateway deployment to apply it to.');
    }
    for (const deployment of deployments) {
      if (!deployment.Properties.StageName) {
        throw new Error('custom.apiStage needs the deployment to create the stage (a StageName), which it does not.');
      }
      deployment.Properties.StageDescription = { ...deployment.Properties.StageDescription, ...settings };
    }
  }
}

module.exports = ApiStageSettings;
