/** A request the simulated CRM refuses, with the status to answer and a reason a person can act on. */
export class CrmError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'CrmError';
  }
}
