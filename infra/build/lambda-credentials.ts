/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (esbuild `alias` in serverless.yml).
 *
 * Lambda hands every function its execution role's credentials as environment variables, so the default
 * chain's other links (INI files, SSO, process, web identity with its nested STS client, IMDS, login)
 * are never used there and only add ~130 KB to each bundle. Tests and the local runtime run the
 * unbundled code and keep the full chain.
 */
export { fromEnv as defaultProvider } from '@aws-sdk/credential-provider-env';
