/**
 * How long a parameter read from SSM is reused, in seconds: a secret or credentials put in it reach
 * every warm instance this long after, at the latest (the ingest's webhook secrets by default, the CRM
 * credentials of reconciliation).
 */
export const PARAMETER_MAX_AGE_SECONDS = 300;
