/**
 * A start that cannot proceed because of something the user can fix (a configuration value, a busy
 * port, a DATA_DIR another receiver holds). Its message is one line that says what to change;
 * `npm start` prints it without a stack trace and exits with status 2.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
