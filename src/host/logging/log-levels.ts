/** The levels LOG_LEVEL accepts: pino's, and `silent`. Apart from the logger, so that reading the
 * configuration (the CLI does, in hosts without pino) loads nothing of it. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
