// serverless.yml's bridge for the custom domain of the HTTP API (infra/domain.yml): the stage params domainName,
// certificateArn and hostedZoneId, checked once so that a mistake is one line at package time rather than a
// failed stack update: a domain needs a certificate of ACM in the stack's own region (a regional endpoint), and a
// certificate or a hosted zone without a domain is refused. Loaded as infra/subscriptions.cjs is: osls (v3) and the
// Framework v4 both call the function with { options, resolveVariable }.
'use strict';

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CERTIFICATE = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[A-Za-z0-9-]+$/;
const HOSTED_ZONE = /^Z[A-Z0-9]{1,31}$/;

/** The checked settings, or an Error naming the param and what is accepted. */
function customDomain({ domainName, certificateArn, hostedZoneId, region }) {
  const fail = (message) => {
    throw new Error(`serverless.yml: ${message}`);
  };
  if (domainName === '') {
    if (certificateArn !== '' || hostedZoneId !== '')
      fail(
        'the stage params certificateArn and hostedZoneId need domainName (the custom domain of the HTTP API)',
      );
    return { domainName, certificateArn, hostedZoneId };
  }
  if (!DOMAIN.test(domainName))
    fail(
      `the stage param domainName must be a lower-case host name such as hooks.example.com, not "${domainName}"`,
    );
  const certificateRegion = CERTIFICATE.exec(certificateArn)?.[1];
  if (certificateRegion === undefined)
    fail(
      `the custom domain ${domainName} needs the stage param certificateArn: the ARN of an ACM certificate for it`,
    );
  if (certificateRegion !== region)
    fail(
      `the certificate of ${domainName} is in ${certificateRegion}, the stack in ${region}: a regional custom domain ` +
        `needs a certificate of ACM in ${region}`,
    );
  if (hostedZoneId !== '' && !HOSTED_ZONE.test(hostedZoneId))
    fail(`the stage param hostedZoneId must be a Route 53 hosted zone id such as Z0123456789ABC, or ""`);
  return { domainName, certificateArn, hostedZoneId };
}

module.exports = async ({ resolveVariable }) => {
  const param = async (name) => String((await resolveVariable(`param:${name}`)) ?? '').trim();
  return customDomain({
    domainName: await param('domainName'),
    certificateArn: await param('certificateArn'),
    hostedZoneId: await param('hostedZoneId'),
    region: await resolveVariable('self:provider.region'),
  });
};
module.exports.customDomain = customDomain;
