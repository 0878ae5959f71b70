/** An event pattern the local matcher cannot evaluate; `path` names the place in the pattern. */
export class PatternError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`invalid event pattern at ${path || '(root)'}: ${reason}`);
    this.name = 'PatternError';
  }
}
