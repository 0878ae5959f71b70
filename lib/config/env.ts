/** Thrown when the environment is missing or malformed; names the variable, never its value. */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly variable: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** The value of a variable that must be set and non-empty. */
export function requireEnv(name: string, env: Env = process.env): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') throw new ConfigError(`${name} must be set`, name);
  return value;
}

/** The value of a variable, or `undefined` when unset or blank. */
export function optionalEnv(name: string, env: Env = process.env): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** A positive integer variable with a default. */
export function intEnv(name: string, fallback: number, env: Env = process.env): number {
  const raw = optionalEnv(name, env);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(`${name} must be a positive integer`, name);
  }
  return value;
}

/** `true`/`false` (also `1`/`0`), with a default. */
export function boolEnv(name: string, fallback: boolean, env: Env = process.env): boolean {
  const raw = optionalEnv(name, env)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false`, name);
}

/** A comma-separated list, trimmed, empty entries dropped. */
export function listEnv(name: string, env: Env = process.env): string[] {
  return (optionalEnv(name, env) ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
