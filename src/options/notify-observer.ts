import { Logger } from '@nestjs/common';

const logger = new Logger('LoyaltyObserver');

/**
 * Calls a host's observer (LoyaltyModuleOptions.observer). Its failure is logged, never passed
 * on: a metric that failed must not fail a committed ingest or throw a loaded rank index away.
 */
export function notifyObserver(call: () => void): void {
  try {
    call();
  } catch (error) {
    logger.warn(`The observer failed: ${(error as Error).message}`);
  }
}
