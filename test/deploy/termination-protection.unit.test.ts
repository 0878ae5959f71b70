import { createRequire } from 'node:module';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';

// The plugin is CommonJS (osls requires it): mock the CommonJS build of the client it loads.
const require = createRequire(import.meta.url);
const { CloudFormationClient, UpdateTerminationProtectionCommand } =
  require('@aws-sdk/client-cloudformation') as typeof import('@aws-sdk/client-cloudformation');
const TerminationProtection = require('../../infra/termination-protection.cjs') as new (
  serverless: unknown,
  options: unknown,
  utils: unknown,
) => { hooks: Record<string, () => Promise<void>> };

const cloudFormation = mockClient(CloudFormationClient);

function plugin(custom: Record<string, unknown>) {
  const serverless = {
    service: { custom },
    getProvider: () => ({
      naming: { getStackName: () => 'crm-webhook-receiver-prod' },
      getAwsSdkV3Config: async () => ({ region: 'eu-west-1' }),
    }),
  };
  return new TerminationProtection(serverless, {}, { log: { notice: () => {} } });
}

describe('infra/termination-protection.cjs', () => {
  beforeEach(() => {
    cloudFormation.reset();
    cloudFormation.on(UpdateTerminationProtectionCommand).resolves({ StackId: 'id' });
  });

  it.each([true, false])('after a deploy, sets the stack’s termination protection to %s', async (enabled) => {
    await plugin({ terminationProtection: enabled }).hooks['after:deploy:deploy']!();

    expect(
      cloudFormation.commandCalls(UpdateTerminationProtectionCommand).map((c) => c.args[0].input),
    ).toEqual([{ StackName: 'crm-webhook-receiver-prod', EnableTerminationProtection: enabled }]);
  });

  it('refuses a setting that is not a boolean, and calls nothing', async () => {
    await expect(plugin({ terminationProtection: 'true' }).hooks['after:deploy:deploy']!()).rejects.toThrow(
      'serverless.yml: custom.terminationProtection must be true or false',
    );
    expect(cloudFormation.calls()).toHaveLength(0);
  });

  it('hooks nothing but the end of a deploy (package makes no AWS call)', () => {
    expect(Object.keys(plugin({ terminationProtection: true }).hooks)).toEqual(['after:deploy:deploy']);
  });
});
