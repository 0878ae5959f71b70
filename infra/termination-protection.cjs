// A local plugin of serverless.yml (`plugins: - ./infra/termination-protection.cjs`; osls and the Serverless
// Framework v4 both load plugins by relative path): after each deploy it sets the stack's termination protection
// to custom.terminationProtection (true on production stages, see custom.production), so that neither
// `remove` nor a stray DeleteStack can delete a production stack. CloudFormation keeps termination protection
// outside the template; UpdateTerminationProtection is its only switch, and setting it again is harmless.
'use strict';

const {
  CloudFormationClient,
  UpdateTerminationProtectionCommand,
} = require('@aws-sdk/client-cloudformation');

class TerminationProtection {
  constructor(serverless, _options, utils) {
    this.serverless = serverless;
    this.log = utils?.log;
    this.hooks = { 'after:deploy:deploy': () => this.apply() };
  }

  async apply() {
    const enabled = this.serverless.service.custom?.terminationProtection;
    if (typeof enabled !== 'boolean')
      throw new Error('serverless.yml: custom.terminationProtection must be true or false');
    const provider = this.serverless.getProvider('aws');
    // osls builds SDK v3 clients from the deploy's profile and region; elsewhere the default chain applies.
    const config =
      typeof provider.getAwsSdkV3Config === 'function'
        ? await provider.getAwsSdkV3Config()
        : { region: provider.getRegion() };
    const StackName = provider.naming.getStackName();
    await new CloudFormationClient(config).send(
      new UpdateTerminationProtectionCommand({ StackName, EnableTerminationProtection: enabled }),
    );
    this.log?.notice?.(`Termination protection of ${StackName}: ${enabled ? 'on' : 'off'}`);
  }
}

module.exports = TerminationProtection;
