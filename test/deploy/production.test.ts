import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../infra/definitions.js';
import { type FakeSsm, startFakeSsm } from '../support/fake-ssm.js';
import { packageStack, type Resource, type Template } from './package.js';

/*
 * The production stage as docs/deploy.md deploys it: settings in serverless.yml's params.prod, the
 * account's own values and the state token in SSM (a fake SSM here, which osls reads through
 * AWS_ENDPOINT_URL_SSM). Each configuration is packaged once, in beforeAll.
 */

const STAGE = 'prod';
const PARAMETER = (name: string) => `/${SERVICE}/${STAGE}/${name}`;
const TOKEN = 'state-token-from-ssm';
const EMAIL = 'ops@example.com';
const DIR = join(tmpdir(), `crm-production-${process.pid}`);

let ssm: FakeSsm;
/** The first deploy as it used to be documented: every setting on the command line. */
let flagged: Template;
/** The redeploy: no flag at all. */
let kept: Template;

beforeAll(async () => {
  ssm = await startFakeSsm();
  ssm.parameters.set(PARAMETER('state-event-token'), TOKEN);
  ssm.parameters.set(PARAMETER('alert-email'), EMAIL);
  ssm.types.set(PARAMETER('alert-email'), 'String');
  const env = { AWS_ENDPOINT_URL_SSM: ssm.endpoint };
  ({ template: flagged } = await packageStack(
    { alertEmail: EMAIL, stateEventToken: TOKEN },
    join(DIR, 'flagged'),
    env,
    STAGE,
  ));
  ({ template: kept } = await packageStack({}, join(DIR, 'kept'), env, STAGE));
}, 600_000);

afterAll(async () => {
  await ssm?.close();
  rmSync(DIR, { recursive: true, force: true });
});

/** The template without the artefacts' upload folder, which is named after the time of packaging. */
function comparable(template: Template): unknown {
  return JSON.parse(
    JSON.stringify(template).replace(/serverless\/[^"]+\/\d+-[0-9T:.Z-]+\//g, 'serverless/<artefacts>/'),
  );
}

function resource(template: Template, logicalId: string): Resource {
  const found = template.Resources[logicalId];
  if (!found) throw new Error(`no resource ${logicalId} in the template`);
  return found;
}

function ingestEnvironment(template: Template): Record<string, unknown> {
  return (
    resource(template, 'IngestLambdaFunction').Properties.Environment as {
      Variables: Record<string, unknown>;
    }
  ).Variables;
}

describe('the production stage keeps its settings across redeploys', () => {
  it('a redeploy without flags packages the same template as the deploy with them', () => {
    expect(comparable(kept)).toEqual(comparable(flagged));
  });

  it('the state token and the alert e-mail come from SSM, under the stage', () => {
    expect(ingestEnvironment(kept).STATE_EVENT_TOKEN).toBe(TOKEN);
    expect(resource(kept, 'AlertEmailSubscription').Properties.Endpoint).toBe(EMAIL);
    expect(kept.Conditions?.HasAlertEmail).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [EMAIL, ''] }] });
    const read = ssm.requests.map((request) => JSON.parse(request.body) as { Name: string });
    expect(new Set(read.map((request) => request.Name))).toEqual(
      new Set([PARAMETER('state-event-token'), PARAMETER('alert-email')]),
    );
  });
});
