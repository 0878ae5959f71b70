/*
 * What CloudFormation and the Serverless Framework make of infra/resources.yml's values when they
 * deploy them, for the definitions read from it (definitions.ts).
 */

/**
 * `Fn::If` on a condition `conditions` names, replaced by the branch it takes (`Ref: AWS::NoValue` drops
 * the property), as CloudFormation does; any other value as it is.
 */
export function resolveConditions(value: unknown, conditions: Record<string, boolean>): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveConditions(item, conditions));
  if (typeof value !== 'object' || value === null) return value;
  const branches = (value as Record<string, unknown>)['Fn::If'];
  if (Array.isArray(branches) && typeof branches[0] === 'string' && branches[0] in conditions)
    return resolveConditions(conditions[branches[0]] ? branches[1] : branches[2], conditions);
  const resolved: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const next = resolveConditions(item, conditions);
    const noValue =
      typeof next === 'object' && next !== null && (next as { Ref?: unknown }).Ref === 'AWS::NoValue';
    if (!noValue) resolved[key] = next;
  }
  return resolved;
}

/**
 * A resource name of infra/resources.yml with `${self:service}` and `${sls:stage}` filled in; any
 * other variable throws.
 */
export function resolveName(name: string, { service, stage }: { service: string; stage: string }): string {
  const resolved = name.replace(/\$\{self:service\}/g, service).replace(/\$\{sls:stage\}/g, stage);
  if (resolved.includes('${')) throw new Error(`Unsupported variable in resource name: ${name}`);
  return resolved;
}
